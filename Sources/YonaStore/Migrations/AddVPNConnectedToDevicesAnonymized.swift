import FluentKit

/// Yona's `vpnConnected` on a device: whether the app last reported its VPN up. A flag on the anonymized row; the
/// history of changes Yona kept (`VpnStatusChangeEvent`) is not stored here, only the current state.
package struct AddVPNConnectedToDevicesAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).field("vpn_connected", .bool, .required, .sql(.default(false))).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeviceAnonymized.schema).deleteField("vpn_connected").update()
    }
}
