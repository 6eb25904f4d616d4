import FluentKit
import Foundation
import SQLKit
import YonaDelivery
import YonaObservability
import YonaStore

/// What the console's dashboard shows: counts only, each read from one side of the split (never a join of the
/// two), as docs/operations.md "The console" lists them.
package struct ConsoleFigures: Sendable {
    /// Accounts on the identity side, as Yona's dashboard counted them.
    package struct Accounts: Sendable {
        package let total: Int
        package let confirmed: Int
        package let unconfirmed: Int
        /// Made by a buddy's invitation and not taken over yet.
        package let invited: Int
        package let whiteListed: Int
    }

    /// Devices (anonymized side) by the last day something happened on them.
    package struct Recency: Sendable {
        package let today: Int
        package let lastWeek: Int
        package let lastMonth: Int
        package let older: Int
        package let never: Int
    }

    /// One outbox: what waits and since when.
    package struct Queue: Sendable {
        package let name: String
        package let depth: Int
        package let oldest: Date?
    }

    package let db: any Database

    package init(db: any Database) { self.db = db }

    package func accounts() async throws -> Accounts {
        let total = try await User.query(on: db).count()
        let confirmed = try await User.query(on: db).filter(\.$mobileNumberConfirmed == true).count()
        let invited = try await User.query(on: db).filter(\.$createdOnBuddyRequest == true).count()
        return Accounts(
            total: total, confirmed: confirmed, unconfirmed: total - confirmed - invited, invited: invited,
            whiteListed: try await WhiteListedNumber.query(on: db).count())
    }

    /// Devices by the day their app was last opened (`opened`) or last reported activity (`monitored`).
    package func recency(of field: KeyPath<DeviceAnonymized, OptionalFieldProperty<DeviceAnonymized, String>>, now: Date = Date())
        async throws -> Recency
    {
        func since(_ days: Int) -> String { UserCalendar.day(now.addingTimeInterval(-Double(days) * 86_400)) }
        let all = try await DeviceAnonymized.query(on: db).count()
        let never = try await DeviceAnonymized.query(on: db).filter(field == nil).count()
        let today = try await DeviceAnonymized.query(on: db).filter(field >= since(0)).count()
        let week = try await DeviceAnonymized.query(on: db).filter(field >= since(6)).count()
        let month = try await DeviceAnonymized.query(on: db).filter(field >= since(29)).count()
        return Recency(today: today, lastWeek: week - today, lastMonth: month - week, older: all - never - month, never: never)
    }

    /// Every outbox: pushes, texts and mails, VPN directory changes, and the announcement fan-out.
    package func queues() async throws -> [Queue] {
        let depths = try await OutboxDepths.read(on: db)
        let pushes = depths.pushesByProvider
        var queues = ["FCM", "APNs", "Web Push"].map { Queue(name: "pushes (\($0))", depth: pushes[$0]?.count ?? 0, oldest: pushes[$0]?.oldest) }
        if let orphans = pushes["none"] { queues.append(Queue(name: "pushes (address cleared)", depth: orphans.count, oldest: orphans.oldest)) }
        for (channel, name) in [("sms", "texts"), ("email", "mail")] {
            let waiting = depths.textsByChannel[channel]
            queues.append(Queue(name: name, depth: waiting?.count ?? 0, oldest: waiting?.oldest))
        }
        queues.append(Queue(name: "VPN directory", depth: depths.vpnChanges.count, oldest: nil))
        queues.append(Queue(name: "announcement fan-out", depth: depths.announcementRecipients, oldest: nil))
        return queues
    }
}
