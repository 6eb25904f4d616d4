import FluentKit
import Foundation

/// A device has at most one push waiting (issue 34, docs/architecture.md "Pushes"): a push only says "there is
/// something new", so messages queued while one waits fold into it. The backlog an older build left is folded the
/// same way: of each device's waiting rows (open and not leased) the oldest stays, so the device's order and the
/// push's age hold, and it names the newest message of them; the others go.
package struct CoalescePushesPerDevice: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        let waiting = try await PendingPush.query(on: database)
            .filter(\.$state == PendingPush.State.pending.rawValue).filter(\.$claimedUntil == nil)
            .sort(\.$createdAt).sort(\.$id)
            // only the columns this migration reads: the model may grow columns an old table does not have yet
            .field(\.$id).field(\.$device.$id).field(\.$messageID).all()
        for rows in Dictionary(grouping: waiting, by: { $0.$device.id }).values where rows.count > 1 {
            // the newer rows go first: the oldest then takes the newest's message without meeting the (device, message) key
            let newer = rows.dropFirst().compactMap(\.id)
            for chunk in newer.chunked(1000) {
                try await PendingPush.query(on: database).filter(\.$id ~~ Array(chunk)).delete()
            }
            try await PendingPush.query(on: database).filter(\.$id == rows[0].id!).set(\.$messageID, to: rows.last!.messageID).update()
        }
    }

    package func revert(on database: any Database) async throws {}
}
