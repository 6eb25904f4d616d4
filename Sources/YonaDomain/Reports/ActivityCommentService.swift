import FluentKit
import Foundation
import YonaStore

/// Comments on a buddy's day or week of a goal, and the replies to them (Yona's `ActivityCommentMessage`). Every
/// comment is a pair: the copy for the other person (pushed) and the sender's own copy (not pushed, listed only with
/// its thread). Each inbox keeps its own thread: the copies there name their thread head and the message they reply
/// to by the ids in that inbox, and each copy's row names its counterpart in the other inbox (`origin_message_id`),
/// so deleting any copy takes its counterpart and every reply to either along.
package struct ActivityCommentService: Sendable {
    package let db: any Database

    package static let maxLength = 200

    /// What a comment is about: the goal version's day or week of a buddy who shares.
    package struct Interval: Sendable {
        package let ownerAnonymizedID: UUID
        package let version: GoalVersion
        /// `day:yyyy-MM-dd` or `week:YYYY-Www`.
        package let key: String

        package init(ownerAnonymizedID: UUID, version: GoalVersion, key: String) {
            self.ownerAnonymizedID = ownerAnonymizedID
            self.version = version
            self.key = key
        }
    }

    /// Yona's length rule, on the comment and on a reply.
    package static func checked(_ text: String?) throws -> String {
        let text = try requireText(text, property: "message")
        guard text.count <= maxLength else { throw YonaError(.stringTooLong, quoting: String(text.count)) }
        return text
    }

    /// Starts a thread on a buddy's interval; returns the sender's copy.
    package func comment(from sender: UnlockedUser, on interval: Interval, text: String, now: Date = Date()) async throws -> Int64 {
        try await db.transaction { tx in
            try await pair(
                from: sender.privateData.userAnonymizedID, to: interval.ownerAnonymizedID, interval: interval.key,
                goalID: interval.version.goalID, versionID: interval.version.id, owner: interval.ownerAnonymizedID, text: text,
                threads: (sender: nil, recipient: nil), replied: (sender: nil, recipient: nil), on: tx, now: now)
        }
    }

    /// Answers a comment in the viewer's inbox (from the buddy, or the viewer's own); returns the viewer's copy.
    package func reply(by viewer: UnlockedUser, to message: OpenedMessage, text: String, now: Date = Date()) async throws -> Int64 {
        let payload = message.payload
        guard payload.kind == .activityComment, let intervalKey = message.record.activityInterval, let goalID = message.record.goalID,
            let other = message.record.senderAnonymizedID, let counterpart = message.record.originMessageID,
            let owner = payload.activityOwnerAnonymizedID, let versionID = payload.goalID
        else { throw YonaError(.messageActionNotSupported) }
        // Only between buddies who still share with each other.
        guard viewer.privateData.buddies.contains(where: { $0.buddyUserAnonymizedID == other }) else { throw YonaError(.buddyNotFound) }
        return try await db.transaction { tx in
            let ownThread = payload.threadHeadMessageID ?? message.id
            let otherThread = try await Message.query(on: tx).filter(\.$id == ownThread).first()?.originMessageID ?? counterpart
            return try await pair(
                from: viewer.privateData.userAnonymizedID, to: other, interval: intervalKey, goalID: goalID, versionID: versionID, owner: owner,
                text: text, threads: (sender: ownThread, recipient: otherThread), replied: (sender: message.id, recipient: counterpart),
                on: tx, now: now)
        }
    }

    /// Writes the two copies; `threads` and `replied` are per inbox (nil for a new thread).
    private func pair(
        from sender: UUID, to recipient: UUID, interval: String, goalID: UUID, versionID: UUID, owner: UUID, text: String,
        threads: (sender: Int64?, recipient: Int64?), replied: (sender: Int64?, recipient: Int64?), on tx: any Database, now: Date
    ) async throws -> Int64 {
        let recipientCopy = MessageWriter.newMessageID()
        let senderCopy = MessageWriter.newMessageID()
        func payload(_ id: Int64, thread: Int64?, replied: Int64?) -> MessagePayload {
            MessagePayload(
                kind: .activityComment, messageID: id, subjectUserAnonymizedID: sender, goalID: versionID, text: text,
                activityOwnerAnonymizedID: owner, interval: interval, threadHeadMessageID: thread ?? id, repliedMessageID: replied)
        }
        func relate(_ message: Message, counterpart: Int64, other: UUID, replied: Int64?) {
            message.originMessageID = counterpart
            message.senderAnonymizedID = other
            message.goalID = goalID
            message.activityInterval = interval
            message.repliedMessageID = replied
        }
        try await MessageWriter.deliver(
            to: recipient, id: recipientCopy, on: tx, now: now,
            payload: payload(recipientCopy, thread: threads.recipient, replied: replied.recipient)
        ) { relate($0, counterpart: senderCopy, other: sender, replied: replied.recipient) }
        try await MessageWriter.deliver(
            to: sender, id: senderCopy, on: tx, now: now, push: false,
            payload: payload(senderCopy, thread: threads.sender, replied: replied.sender)
        ) { message in
            relate(message, counterpart: recipientCopy, other: recipient, replied: replied.sender)
            message.isSentItem = true
        }
        return senderCopy
    }

    /// A comment names the goal version its day or week was shown under when it was written; after a later change
    /// of the goal another version is in force for that interval (Yona moves the interval to the earlier version).
    /// Each comment is given the version in force now, so its `yona:dayDetails`/`yona:weekDetails` link and a reply
    /// keep reaching the interval (as Yona's, which it works out from the interval on every read).
    package static func namingVersionsInForce(_ opened: [OpenedMessage], on db: any Database) async throws -> [OpenedMessage] {
        let comments = opened.filter { $0.payload.kind == .activityComment && $0.record.goalID != nil && $0.record.activityInterval != nil }
        guard !comments.isEmpty else { return opened }
        let owners = Set(comments.compactMap(\.payload.activityOwnerAnonymizedID))
        let versions = try await ActivityReportService(db: db).versions(ofAnonymizedUsers: Array(owners))
        return opened.map { message in
            guard message.payload.kind == .activityComment, let goalID = message.record.goalID,
                let owner = message.payload.activityOwnerAnonymizedID, let key = message.record.activityInterval,
                let end = intervalEnd(key),
                let inForce = versions[owner]?.first(where: { $0.goalID == goalID && $0.governs(intervalEndingAt: end) }),
                inForce.id != message.payload.goalID
            else { return message }
            var payload = message.payload
            payload.goalID = inForce.id
            return OpenedMessage(record: message.record, payload: payload)
        }
    }

    /// Where an interval key (`day:yyyy-MM-dd`, `week:YYYY-Www`) ends, in the users' calendar.
    static func intervalEnd(_ key: String) -> Date? {
        if key.hasPrefix("day:") { return UserCalendar.parseDay(String(key.dropFirst(4))).map { UserCalendar.adding(days: 1, to: $0) } }
        if key.hasPrefix("week:") { return UserCalendar.parseWeek(String(key.dropFirst(5))).map { UserCalendar.adding(days: 7, to: $0) } }
        return nil
    }

    /// The comments on an interval in the viewer's inbox, sent and received, whole threads in the order they began.
    package func thread(of viewer: UnlockedUser, goalID: UUID, interval: String) async throws -> [OpenedMessage] {
        let inbox = try viewer.anonymousInbox()
        let rows = try await Message.query(on: db)
            .filter(\.$userAnonymized.$id == viewer.privateData.userAnonymizedID)
            .filter(\.$goalID == goalID).filter(\.$activityInterval == interval).all()
        let key = MessageWriter.envelopeKey(of: inbox)
        let opened = try await Self.namingVersionsInForce(
            try rows.map { OpenedMessage(record: $0, payload: try MessageWriter.open($0, with: inbox, envelopeKey: key).payload) }, on: db)
        let created = Dictionary(uniqueKeysWithValues: opened.map { ($0.id, $0.record.creationTime) })
        func order(_ message: OpenedMessage) -> (Date, Date, Int64) {
            let head = message.payload.threadHeadMessageID ?? message.id
            return (created[head] ?? message.record.creationTime, message.record.creationTime, message.id)
        }
        return opened.sorted { order($0) < order($1) }
    }

    package init(db: any Database) {
        self.db = db
    }
}
