import Fluent
import Foundation
import SQLKit
import YonaCrypto

/// One thing a device did, as the classifier (or the app) reports it.
struct ActivityEvent: Sendable {
    let userAnonymizedID: UUID
    let deviceIndex: Int
    /// Classifier category names, or app names for app activity.
    let categoryNames: [String]
    let matchApplications: Bool
    let url: String?
    let startTime: Date
    let endTime: Date?
    let idempotencyKey: String?
}

/// Turns reported activity into activities per device and goal, and raises a goal conflict when a
/// no-go goal is hit. Events of one user are handled one at a time, across instances too.
struct AnalysisService: Sendable {
    static let mergeGap: TimeInterval = 15 * 60
    static let minimumDuration: TimeInterval = 60
    static let maxFutureSkew: TimeInterval = 10
    static let maxURLLength = 2048

    let db: any Database
    var metrics: YonaMetrics? = nil

    /// Records the event; returns the ids of the messages it raised.
    @discardableResult
    func record(_ event: ActivityEvent, now: Date = Date()) async throws -> [Int64] {
        guard event.startTime <= now.addingTimeInterval(Self.maxFutureSkew) else { throw YonaError(.invalidEventTime) }
        let categories = try await ActivityCategory.query(on: db).all().filter { category in
            let names = event.matchApplications ? category.applications : category.classifierCategories
            return !Set(names).isDisjoint(with: event.categoryNames)
        }
        let raised: [Int64] = try await serialized(event.userAnonymizedID) { tx -> [Int64] in
            guard try await UserAnonymized.find(event.userAnonymizedID, on: tx) != nil else { throw YonaError(.userNotFound) }
            guard
                let device = try await DeviceAnonymized.query(on: tx)
                    .filter(\.$userAnonymized.$id == event.userAnonymizedID)
                    .filter(\.$deviceIndex == event.deviceIndex).first()
            else {
                throw YonaError(.deviceNotFound)
            }
            // Yona's "last seen": the day the activity ended, whatever it matched (one statement; it only moves forward).
            let day = UserCalendar.day(max(event.endTime ?? event.startTime, event.startTime))
            try await tx.sql.raw(
                """
                UPDATE devices_anonymized SET last_monitored_activity_date = \(bind: day)
                WHERE id = \(bind: device.id!) AND (last_monitored_activity_date IS NULL OR last_monitored_activity_date < \(bind: day))
                """
            ).run()
            if let key = event.idempotencyKey {
                let hash = Self.keyHash(event.userAnonymizedID, key)
                if try await ProcessedAnalyzerEvent.query(on: tx).filter(\.$keyHash == hash).count() > 0 { return [] }
                try await ProcessedAnalyzerEvent(id: UUID(), keyHash: hash, processedAt: now).create(on: tx)
            }
            guard !categories.isEmpty else { return [] }
            let goals = try await Goal.query(on: tx)
                .filter(\.$userAnonymized.$id == event.userAnonymizedID)
                .filter(\.$activityCategory.$id ~~ categories.compactMap(\.id))
                .all()
            var raised: [Int64] = []
            // Yona's apps measure app use on Android themselves; the classifier's view of an Android phone counts
            // only for no-go goals (a budget would count the same minutes twice).
            let onlyNoGo = !event.matchApplications && device.operatingSystem == "ANDROID"
            for goal in goals {
                // An activity counts for the goal as it was when it happened (a late event, a goal changed since).
                // (Within the 10 s a device's clock may be off, as Yona: a goal made just after counts.)
                guard let spec = try await Self.version(of: goal, at: event.startTime.addingTimeInterval(Self.maxFutureSkew), on: tx) else {
                    continue
                }
                if onlyNoGo && !spec.isNoGo { continue }
                let isNew = try await mergeActivity(event, device: device.id!, goal: goal.id!, on: tx)
                if isNew, spec.isNoGo {
                    raised += try await raiseGoalConflict(event, goal: goal, on: tx, now: now)
                }
            }
            return raised
        }
        metrics?.analyzerEvent(conflicts: raised.count)
        return raised
    }

    /// What `goal` asked at `time`: the goal itself from its creation on, an earlier version (history item) before
    /// that, nothing before the goal existed.
    static func version(of goal: Goal, at time: Date, on db: any Database) async throws -> GoalSpec? {
        if goal.creationTime <= time { return goal.spec }
        guard
            let item = try await GoalHistoryItem.query(on: db).filter(\.$goal.$id == goal.id!)
                .filter(\.$creationTime <= time).filter(\.$endTime > time).first()
        else { return nil }
        return item.spec
    }

    /// Extends the device's activity on the goal when the event lies within 15 minutes of it (in either
    /// order of arrival); otherwise starts a new one. Returns whether it is new.
    private func mergeActivity(_ event: ActivityEvent, device: UUID, goal: UUID, on tx: any Database) async throws -> Bool {
        let start = event.startTime
        let end = max(event.endTime ?? start, start.addingTimeInterval(Self.minimumDuration))
        let near = try await Activity.query(on: tx)
            .filter(\.$device.$id == device).filter(\.$goal.$id == goal)
            .filter(\.$startTime <= end.addingTimeInterval(Self.mergeGap))
            .filter(\.$endTime >= start.addingTimeInterval(-Self.mergeGap))
            .sort(\.$endTime, .descending).first()
        if let near {
            near.startTime = min(near.startTime, start)
            near.endTime = max(near.endTime, end)
            try await near.save(on: tx)
            return false
        }
        try await Activity(
            id: UUID(), userAnonymizedID: event.userAnonymizedID, deviceID: device, goalID: goal,
            startTime: start, endTime: end
        ).create(on: tx)
        return true
    }

    /// The user's own copy carries the URL; each buddy the user shares with gets a confidential copy without it.
    private func raiseGoalConflict(_ event: ActivityEvent, goal: Goal, on tx: any Database, now: Date) async throws -> [Int64] {
        let url = event.url.map { String($0.prefix(Self.maxURLLength)) }
        let end = max(event.endTime ?? event.startTime, event.startTime.addingTimeInterval(Self.minimumDuration))
        let conflict = MessagePayload(
            kind: .goalConflict, messageID: 0, subjectUserAnonymizedID: event.userAnonymizedID,
            activityCategoryID: goal.$activityCategory.id, goalID: goal.id, url: url,
            activityStartTime: event.startTime, activityEndTime: end, status: "ANNOUNCED")
        guard
            let original = try await MessageWriter.deliver(
                to: event.userAnonymizedID, on: tx, now: now,
                { id in
                    var own = conflict
                    own.messageID = id
                    return own
                })
        else { return [] }
        var raised = [original]
        let sharing = try await BuddyAnonymized.query(on: tx)
            .filter(\.$owner.$id == event.userAnonymizedID)
            .filter(\.$sendingStatus == PrivateBuddy.Status.accepted.rawValue)
            .filter(\.$buddyUserAnonymizedID != nil).all()
        for buddy in sharing {
            guard let recipient = buddy.buddyUserAnonymizedID else { continue }
            let copy = try await MessageWriter.deliver(to: recipient, on: tx, now: now) { id in
                var copy = conflict
                copy.messageID = id
                copy.url = nil
                copy.originalMessageID = original
                return copy
            }
            if let copy { raised.append(copy) }
        }
        return raised
    }

    private func serialized<T: Sendable>(_ userAnonymizedID: UUID, _ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await db.transaction { tx in
            try await tx.lockAnonymizedUser(userAnonymizedID)
            return try await body(tx)
        }
    }

    static func keyHash(_ userAnonymizedID: UUID, _ key: String) -> String {
        KeyedHash.hash(userAnonymizedID.bytes + Array(key.utf8), key: Array("yona/idempotency/v1".utf8), outputLength: 16)
            .map { String(format: "%02x", $0) }.joined()
    }

    /// How long an idempotency key is remembered: a classifier retries within minutes, not weeks.
    static let idempotencyKeyLifetime: TimeInterval = 7 * 86_400

    /// Forgets idempotency keys older than their lifetime; every instance runs it now and then.
    static func purgeIdempotencyKeys(on db: any Database, now: Date = Date()) async throws {
        try await ProcessedAnalyzerEvent.query(on: db).filter(\.$processedAt < now.addingTimeInterval(-idempotencyKeyLifetime)).delete()
    }
}
