import FluentKit
import Foundation
import SQLKit
import YonaStore

/// A user's devices: the name and link in the encrypted private data, everything a push or the classifier
/// needs on the anonymized row.
package struct DeviceService: Sendable {
    package let db: any Database
    package let users: UserService

    package func device(_ deviceID: UUID, of user: UnlockedUser) async throws -> OwnDevice {
        guard let device = try await users.devices(of: user).first(where: { $0.device.id == deviceID }) else {
            throw YonaError(.deviceNotFound)
        }
        return device
    }

    /// Adds a device at the first free index of the user's anonymized side.
    package func add(_ new: NewDevice, to user: UnlockedUser) async throws -> (UnlockedUser, UserDevice) {
        try Self.checkNameIsFree(new.name, in: user.privateData, except: nil)
        let device = UserDevice.registered(name: new.name)
        let anonymizedID = user.privateData.userAnonymizedID
        let updated = try await db.transaction { tx in
            // Two phones registering at once must not pick the same index.
            try await tx.lockAnonymizedUser(anonymizedID)
            let used = Set(try await DeviceAnonymized.query(on: tx).filter(\.$userAnonymized.$id == anonymizedID).all(\.$deviceIndex))
            let index = (0...).first { !used.contains($0) }!
            try await DeviceAnonymized(new, id: device.deviceAnonymizedID, userAnonymizedID: anonymizedID, deviceIndex: index).create(on: tx)
            try await users.vpnAccounts?.create(
                login: VPNLogin.id(anonymizedID, deviceIndex: index), password: device.vpnPassword ?? "", on: tx)
            let updated = try await users.modifyPrivateData(user, on: tx) { data in
                try Self.checkNameIsFree(new.name, in: data, except: nil)
                data.devices.append(device)
            }
            try await Self.announce(updated, change: "DEVICE_ADDED", oldName: nil, newName: new.name, on: tx)
            return updated
        }
        return (updated, device)
    }

    /// Renames a device, stores the push address the app sends (an omitted one is kept; sending it again counts as a
    /// refresh; a new one replaces whichever the device had, of any kind) and sets the notification switch.
    package func update(
        _ deviceID: UUID, of user: UnlockedUser, name: String, pushAddress: PushAddress?,
        notificationsEnabled: Bool? = nil
    ) async throws -> UnlockedUser {
        let current = try await device(deviceID, of: user)
        return try await db.transaction { tx in
            if let pushAddress {
                let row = DeviceAnonymized()
                pushAddress.apply(to: row, at: Date())
                try await DeviceAnonymized.query(on: tx).filter(\.$id == current.device.deviceAnonymizedID)
                    .set(\.$firebaseInstanceID, to: row.firebaseInstanceID)
                    .set(\.$apnsToken, to: row.apnsToken)
                    .set(\.$webPushSubscription, to: row.webPushSubscription)
                    .set(\.$firebaseInstanceIDUpdatedAt, to: row.firebaseInstanceIDUpdatedAt)
                    .update()
            }
            if let notificationsEnabled {
                try await DeviceAnonymized.query(on: tx).filter(\.$id == current.device.deviceAnonymizedID)
                    .set(\.$notificationsEnabled, to: notificationsEnabled)
                    .update()
            }
            guard name != current.device.name else { return user }
            let updated = try await users.modifyPrivateData(user, on: tx) { data in
                try Self.checkNameIsFree(name, in: data, except: deviceID)
                guard let index = data.devices.firstIndex(where: { $0.id == deviceID }) else { throw YonaError(.deviceNotFound) }
                data.devices[index].name = name
            }
            // A new name is announced to buddies; a new Instance ID never is.
            try await Self.announce(updated, change: "DEVICE_RENAMED", oldName: current.device.name, newName: name, on: tx)
            return updated
        }
    }

    /// Removes a device, never the last one.
    package func delete(_ deviceID: UUID, of user: UnlockedUser) async throws {
        let current = try await device(deviceID, of: user)
        try await db.transaction { tx in
            let updated = try await users.modifyPrivateData(user, on: tx) { data in
                guard data.devices.count > 1 else { throw YonaError(.cannotDeleteLastDevice) }
                data.devices.removeAll { $0.id == deviceID }
            }
            // Its activities stay, unlinked, as Yona's: the days they were part of keep their minutes.
            try await tx.sql.raw(
                "UPDATE activities SET device_anonymized_id = NULL WHERE device_anonymized_id = \(bind: current.device.deviceAnonymizedID)"
            ).run()
            try await DeviceAnonymized.query(on: tx).filter(\.$id == current.device.deviceAnonymizedID).delete()
            try await users.vpnAccounts?.delete(
                login: VPNLogin.id(user.privateData.userAnonymizedID, deviceIndex: current.deviceIndex), on: tx)
            try await Self.announce(updated, change: "DEVICE_DELETED", oldName: current.device.name, newName: nil, on: tx)
        }
    }

    /// Records that the app was opened: the day, the app version, the locale, and the operating system
    /// if it was still unknown. A device never switches between Android and iOS.
    /// `app` is nil when the app reported only that it opened (Yona's empty body).
    package func recordAppOpened(
        _ deviceID: UUID, of user: UnlockedUser,
        app: AppReport?,
        locale: String, on day: String
    ) async throws {
        let current = try await device(deviceID, of: user)
        let query = DeviceAnonymized.query(on: db).filter(\.$id == current.device.deviceAnonymizedID)
            .set(\.$appLastOpenedDate, to: day)
            .set(\.$locale, to: locale)
        if let app {
            guard current.operatingSystem == .unknown || current.operatingSystem == app.operatingSystem else {
                throw YonaError(.cannotSwitchOperatingSystem)
            }
            query.set(\.$operatingSystem, to: app.operatingSystem.rawValue)
                .set(\.$appVersion, to: app.version)
                .set(\.$appVersionCode, to: app.versionCode)
        }
        try await query.update()
    }

    /// Records the VPN state the app reports for one of the user's devices. A change is announced to every buddy
    /// the user shares with (Yona's `BuddyVpnConnectionStatusChangeMessage`, pushed content-free like every
    /// message); the same state reported again changes and announces nothing. The flag flips in one conditional
    /// UPDATE, so two racing reports of one change announce it once.
    package func recordVPNStatus(_ deviceID: UUID, of user: UnlockedUser, connected: Bool) async throws {
        let current = try await device(deviceID, of: user)
        try await db.transaction { tx in
            let flipped = try await tx.sql.raw(
                """
                UPDATE \(unsafeRaw: DeviceAnonymized.schema) SET vpn_connected = \(bind: connected)
                WHERE id = \(bind: current.device.deviceAnonymizedID) AND vpn_connected <> \(bind: connected)
                RETURNING id
                """
            ).first()
            guard flipped != nil else { return }
            try await BuddyService.announce(user, on: tx) { id in
                MessagePayload(
                    kind: .buddyVPNConnectionStatusChange, messageID: id, subjectUserAnonymizedID: user.privateData.userAnonymizedID,
                    deviceName: current.device.name, vpnConnected: connected)
            }
        }
    }

    /// Yona: a device whose platform is still unknown and that reports app activity is an Android phone (only
    /// the Android app reports app activity).
    package func markAndroidIfUnknown(_ device: OwnDevice) async throws {
        guard device.operatingSystem == .unknown else { return }
        try await DeviceAnonymized.query(on: db).filter(\.$id == device.device.deviceAnonymizedID)
            .filter(\.$operatingSystem == OperatingSystem.unknown.rawValue)
            .set(\.$operatingSystem, to: OperatingSystem.android.rawValue)
            .update()
    }

    /// Tells accepted buddies about a change, with the device names as just stored (`user` is the updated user).
    private static func announce(_ user: UnlockedUser, change: String, oldName: String?, newName: String?, on tx: any Database) async throws {
        try await BuddyService.announceDevices(
            user, on: tx,
            change: change, oldName: oldName, newName: newName)
    }

    private static func checkNameIsFree(_ name: String, in data: UserPrivateData, except deviceID: UUID?) throws {
        if data.devices.contains(where: { $0.name == name && $0.id != deviceID }) {
            throw YonaError(.deviceNameAlreadyExists)
        }
    }

    package init(db: any Database, users: UserService) {
        self.db = db
        self.users = users
    }
}
