import FluentKit
import Foundation
import SQLKit

/// Texts are claimed as pushes and VPN changes are, by their lease alone (`Outbox`): a text claimed by an older
/// build (`state = 'claimed'`) is pending again, and goes out once its lease has lapsed.
package struct LeaseTextsAsTheOtherOutboxes: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await (database as! any SQLDatabase).raw("UPDATE \(unsafeRaw: PendingText.schema) SET state = 'pending' WHERE state = 'claimed'").run()
    }

    package func revert(on database: any Database) async throws {}
}
