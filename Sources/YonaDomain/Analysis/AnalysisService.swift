import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaObservability
import YonaStore

/// One thing a device did, as the classifier (or the app) reports it.
package struct ActivityEvent: Sendable {
    package let userAnonymizedID: UUID
    package let deviceIndex: Int
    /// Classifier category names, or app names for app activity.
    package let categoryNames: [String]
    package let matchApplications: Bool
    package let url: String?
    package let startTime: Date
    package let endTime: Date?
    /// The app of app activity (nil for network activity).
    package let app: ActivityApp?
    package let idempotencyKey: String?
    /// The key as stored (`AnalysisService.keyHash`): hashed once, where the event is made, not in its round.
    package let idempotencyKeyHash: String?

    package init(
        userAnonymizedID: UUID, deviceIndex: Int, categoryNames: [String], matchApplications: Bool, url: String?, startTime: Date,
        endTime: Date?, app: ActivityApp? = nil, idempotencyKey: String?
    ) {
        self.userAnonymizedID = userAnonymizedID
        self.deviceIndex = deviceIndex
        self.categoryNames = categoryNames
        self.matchApplications = matchApplications
        self.url = url
        self.startTime = startTime
        self.endTime = endTime
        self.app = app
        self.idempotencyKey = idempotencyKey
        idempotencyKeyHash = idempotencyKey.map { AnalysisService.keyHash(userAnonymizedID, $0) }
    }
}

/// Events of one device that are recorded together or not at all: one classifier post, or one app-activity batch.
package struct ActivityReport: Sendable {
    package let userAnonymizedID: UUID
    package let deviceIndex: Int
    package let events: [ActivityEvent]

    package init(_ event: ActivityEvent) {
        self.init(userAnonymizedID: event.userAnonymizedID, deviceIndex: event.deviceIndex, events: [event])
    }

    /// `events` must all be of this user's device.
    package init(userAnonymizedID: UUID, deviceIndex: Int, events: [ActivityEvent]) {
        precondition(events.allSatisfy { $0.userAnonymizedID == userAnonymizedID && $0.deviceIndex == deviceIndex })
        self.userAnonymizedID = userAnonymizedID
        self.deviceIndex = deviceIndex
        self.events = events
    }
}

/// Turns reported activity into activities per device and goal, and raises a goal conflict when a
/// no-go goal is hit. Reports of one user are handled one at a time, across instances too.
///
/// Reports arriving together are recorded together: `AnalysisService.ingest` hands each to a group commit, whose
/// current round takes every report waiting and records them in one transaction with set-based reads (devices,
/// goals, idempotency keys of the whole round at once). A busy classifier then costs one transaction per round,
/// not one per event; each post still gets its own answer, after its round committed (docs/performance.md).
package struct AnalysisService: Sendable {
    package static let mergeGap: TimeInterval = 15 * 60
    package static let minimumDuration: TimeInterval = 60
    package static let maxFutureSkew: TimeInterval = 10
    package static let maxURLLength = 2048

    package let db: any Database
    package var metrics: YonaMetrics? = nil
    /// The process's group commit; without one each report is its own round.
    package var ingest: GroupCommit<ActivityReport, [Int64]>? = nil

    /// Records the event; returns the ids of the messages it raised.
    @discardableResult
    package func record(_ event: ActivityEvent, now: Date = Date()) async throws -> [Int64] {
        try await record(ActivityReport(event), now: now)
    }

    /// Records the report's events in their order, all or none; returns the ids of the messages they raised.
    @discardableResult
    package func record(_ report: ActivityReport, now: Date = Date()) async throws -> [Int64] {
        for event in report.events where event.startTime > now.addingTimeInterval(Self.maxFutureSkew) {
            throw YonaError(.invalidEventTime)
        }
        let raised: [Int64]
        if let ingest {
            raised = try await ingest.submit(report, on: db)
        } else {
            raised = try await Self.recordRound([report], on: db, now: now)[0].get()
        }
        metrics?.analyzerEvents(report.events.count, conflicts: raised.count)
        return raised
    }

    /// The group commit's round: every report in one transaction. A report whose user or device does not exist
    /// fails alone (nothing of it is written); an error of the store fails the round (the group commit then
    /// retries each report in a round of its own). `readAhead: false` asks the store event by event instead of
    /// reading ahead (`Round.prefetch`): the reference the read-ahead is tested against.
    package static func recordRound(
        _ reports: [ActivityReport], on db: any Database, now: Date = Date(), readAhead: Bool = true
    ) async throws -> [Result<[Int64], any Error>] {
        let categories = try await Round.CategoryMatch.all(on: db)
        return try await db.transaction { tx in
            let round = try await Round.load(reports, categories: categories, on: tx, now: now)
            if readAhead { try await round.prefetch(reports, on: tx) }
            var results: [Result<[Int64], any Error>] = []
            for report in reports {
                guard round.users.contains(report.userAnonymizedID) else {
                    results.append(.failure(YonaError(.userNotFound)))
                    continue
                }
                guard let device = round.devices[DeviceKey(user: report.userAnonymizedID, index: report.deviceIndex)] else {
                    results.append(.failure(YonaError(.deviceNotFound)))
                    continue
                }
                var raised: [Int64] = []
                for event in report.events where round.isFirstSight(event) {
                    raised += try await record(event, device: device, round: round, on: tx)
                }
                results.append(.success(raised))
            }
            try await round.finish(on: tx)
            return results
        }
    }

    private static func record(_ event: ActivityEvent, device: Round.Device, round: Round, on tx: any Database) async throws -> [Int64] {
        // Yona's "last seen": the day the activity ended, whatever it matched.
        round.sawActivity(of: device, on: UserCalendar.day(max(event.endTime ?? event.startTime, event.startTime)))
        var raised: [Int64] = []
        for hit in try round.hits(of: event, device: device) {
            guard let spec = try await version(of: hit.goal, at: hit.versionTime, on: tx) else { continue }
            let isNoGo = spec.isNoGo
            if hit.onlyNoGo && !isNoGo { continue }
            let started = try await round.activities.merge(hit.span, key: hit.key, app: event.app, user: event.userAnonymizedID, on: tx)
            // A new activity is a new conflict unless any activity of the device on the goal (of any app) lies within
            // 15 minutes of it: Yona raised no second conflict for a session split only by its app.
            if let started, isNoGo, try await !round.activities.hasNeighbour(of: hit.span, besides: started, key: hit.key, on: tx) {
                raised += try await raiseGoalConflict(event, goal: hit.goal, round: round, on: tx)
            }
        }
        return raised
    }

    /// What `goal` asked at `time`: the goal itself from its creation on, an earlier version (history item) before
    /// that, nothing before the goal existed.
    package static func version(of goal: Goal, at time: Date, on db: any Database) async throws -> GoalSpec? {
        if goal.creationTime <= time { return goal.spec }
        guard
            let item = try await GoalHistoryItem.query(on: db).filter(\.$goal.$id == goal.requireID())
                .filter(\.$creationTime <= time).filter(\.$endTime > time).first()
        else { return nil }
        return item.spec
    }

    /// The user's own copy carries the URL; each buddy the user shares with gets a confidential copy without it.
    /// The messages (and their pushes) are written with the round's others at its end.
    private static func raiseGoalConflict(
        _ event: ActivityEvent, goal: Goal, round: Round, on tx: any Database
    ) async throws -> [Int64] {
        let url = event.url.map { String($0.prefix(maxURLLength)) }
        let end = max(event.endTime ?? event.startTime, event.startTime.addingTimeInterval(minimumDuration))
        let (sharing, keys) = try await round.sharingBuddies(of: event.userAnonymizedID, on: tx)
        guard keys[event.userAnonymizedID] != nil else { return [] }
        let original = MessageWriter.newMessageID()
        let conflict = MessagePayload(
            kind: .goalConflict, messageID: original, subjectUserAnonymizedID: event.userAnonymizedID,
            activityCategoryID: goal.$activityCategory.id, goalID: goal.id, url: url,
            activityStartTime: event.startTime, activityEndTime: end, status: "ANNOUNCED")
        var deliveries = [MessageWriter.Delivery(recipient: event.userAnonymizedID, id: original, payload: conflict)]
        for buddy in sharing where keys[buddy] != nil {
            var copy = conflict
            copy.messageID = MessageWriter.newMessageID()
            copy.url = nil
            copy.originalMessageID = original
            deliveries.append(MessageWriter.Delivery(recipient: buddy, id: copy.messageID, payload: copy))
        }
        round.queue(deliveries)
        return deliveries.map(\.id)
    }

    package static func keyHash(_ userAnonymizedID: UUID, _ key: String) -> String {
        Hex.lowercase(KeyedHash.hash(userAnonymizedID.bytes + Array(key.utf8), key: Array("yona/idempotency/v1".utf8), outputLength: 16))
    }

    /// How long an idempotency key is remembered: a classifier retries within minutes, not weeks.
    package static let idempotencyKeyLifetime: TimeInterval = 7 * 86_400

    /// Forgets idempotency keys older than their lifetime; every instance runs it now and then.
    package static func purgeIdempotencyKeys(on db: any Database, now: Date = Date()) async throws {
        try await ProcessedAnalyzerEvent.query(on: db).filter(\.$processedAt < now.addingTimeInterval(-idempotencyKeyLifetime)).delete()
    }

    package init(db: any Database, metrics: YonaMetrics? = nil, ingest: GroupCommit<ActivityReport, [Int64]>? = nil) {
        self.db = db
        self.metrics = metrics
        self.ingest = ingest
    }
}

private struct DeviceKey: Hashable {
    package let user: UUID
    package let index: Int
}

/// What one round reads at once for all its reports, and the writes it saves for its end.
private final class Round {
    package struct Device {
        package let id: UUID
        package let operatingSystem: String
        package let lastMonitoredDay: String?
    }

    /// What an event is matched by: a category's classifier names and app names (the localized texts are not read).
    package struct CategoryMatch: Sendable {
        package let id: UUID
        package let classifierCategories: [String]
        package let applications: [String]

        /// Every category, read once per round with raw SQL: Fluent's decoding of whole categories (their localized
        /// names and descriptions) was 2% of an analyzer post's CPU.
        package static func all(on db: any Database) async throws -> [CategoryMatch] {
            try await db.sql.raw("SELECT id, classifier_categories, applications FROM \(unsafeRaw: ActivityCategory.schema)").all().map {
                CategoryMatch(
                    id: try $0.decode(column: "id", as: UUID.self),
                    classifierCategories: try $0.decode(column: "classifier_categories", as: [String].self),
                    applications: try $0.decode(column: "applications", as: [String].self))
            }
        }
    }

    package let categories: [CategoryMatch]
    package let users: Set<UUID>
    package let devices: [DeviceKey: Device]
    package let goals: [UUID: [Goal]]
    private let now: Date
    /// Idempotency-key hashes stored before this round; the ones this round saw, to store at its end.
    private let storedKeys: Set<String>
    private var newKeys: [String] = []
    /// The latest day of activity per device this round, where it moves the device's "last seen" forward.
    private var lastDays: [UUID: String] = [:]
    /// The buddies each of the round's users shares with, read with their inbox keys at the round's first conflict;
    /// the inbox keys of the round's users, read with their locks; the messages its conflicts raised, written at its
    /// end.
    private var sharing: [UUID: [UUID]]?
    private var inboxKeys: [UUID: [UInt8]]
    /// The devices that can get a push, keyed by every user read so far (the round's users, then their buddies; an
    /// empty set for one without), read with them, so the round's pushes need no read of their own.
    private var pushDevices: [UUID: Set<UUID>]
    private var deliveries: [MessageWriter.Delivery] = []
    /// Their payloads, sealed on another thread while the round goes on with the database (sealing is the CPU
    /// part of a conflict, and a round's database work is one chain of round trips).
    private var sealing: [Task<[Data], any Error>] = []

    private init(
        categories: [CategoryMatch], users: Set<UUID>, inboxKeys: [UUID: [UInt8]], devices: [DeviceKey: Device],
        pushDevices: [UUID: Set<UUID>], goals: [UUID: [Goal]], storedKeys: Set<String>, now: Date
    ) {
        self.categories = categories
        self.users = users
        self.inboxKeys = inboxKeys
        self.pushDevices = pushDevices
        self.devices = devices
        self.goals = goals
        self.storedKeys = storedKeys
        self.now = now
    }

    /// Locks the round's users (in one order, so rounds of several instances never deadlock; `NO KEY UPDATE`, so a
    /// message inserted for a locked user elsewhere does not wait) with their devices, and reads their goals on the
    /// categories the round names, and which of its idempotency keys are known.
    package static func load(_ reports: [ActivityReport], categories: [CategoryMatch], on tx: any Database, now: Date) async throws -> Round {
        let userIDs = Array(Set(reports.map(\.userAnonymizedID))).sorted { $0.uuidString < $1.uuidString }
        // The users and their devices in one statement (one round trip fewer per round): a user without a device still
        // has its row, with nulls for the device's columns. The lock is on the users' rows only.
        let lock = tx.sql.dialect.name == "sqlite" ? "" : " ORDER BY u.id FOR NO KEY UPDATE OF u"
        var users: Set<UUID> = []
        var inboxKeys: [UUID: [UInt8]] = [:]
        var devices: [DeviceKey: Device] = [:]
        var pushDevices: [UUID: Set<UUID>] = [:]
        for row in try await tx.sql.raw(
            """
            SELECT u.id AS user_id, u.anonymous_inbox_public_key AS inbox_key, d.id, d.device_index, d.operating_system,
            d.last_monitored_activity_date, CASE WHEN \(unsafeRaw: OutboxWriter.canGetPushes("d")) THEN 1 ELSE 0 END AS pushable
            FROM \(unsafeRaw: UserAnonymized.schema) u LEFT JOIN \(unsafeRaw: DeviceAnonymized.schema) d ON d.user_anonymized_id = u.id
            WHERE u.id IN (\(binds: userIDs))\(unsafeRaw: lock)
            """
        ).all() {
            let user = try row.decode(column: "user_id", as: UUID.self)
            users.insert(user)
            if pushDevices[user] == nil { pushDevices[user] = [] }
            inboxKeys[user] = try row.decode(column: "inbox_key", as: Data?.self).map { Array($0) }
            guard let device = try row.decode(column: "id", as: UUID?.self) else { continue }
            if try row.decode(column: "pushable", as: Int.self) == 1 { pushDevices[user, default: []].insert(device) }
            devices[DeviceKey(user: user, index: try row.decode(column: "device_index", as: Int.self))] = Device(
                id: device, operatingSystem: try row.decode(column: "operating_system", as: String.self),
                lastMonitoredDay: try row.decode(column: "last_monitored_activity_date", as: String?.self))
        }
        guard !users.isEmpty else {
            return Round(categories: categories, users: [], inboxKeys: [:], devices: [:], pushDevices: [:], goals: [:], storedKeys: [], now: now)
        }
        let named = Set(reports.flatMap(\.events).flatMap(\.categoryNames))
        let relevant = categories.filter { !named.isDisjoint(with: $0.classifierCategories) || !named.isDisjoint(with: $0.applications) }
            .map(\.id)
        var goals: [UUID: [Goal]] = [:]
        if !relevant.isEmpty {
            let relevantSet = Set(relevant)
            goals = Dictionary(
                grouping: try await GoalService(db: tx).goals(ofAnonymizedUsers: Array(users)).filter {
                    relevantSet.contains($0.$activityCategory.id)
                }
            ) { $0.$userAnonymized.id }
        }
        let hashes = reports.flatMap(\.events).compactMap(\.idempotencyKeyHash)
        var stored: Set<String> = []
        if !hashes.isEmpty {
            stored = Set(
                try await tx.sql.raw(
                    "SELECT key_hash FROM \(unsafeRaw: ProcessedAnalyzerEvent.schema) WHERE key_hash IN (\(binds: Array(Set(hashes))))"
                ).all().map { try $0.decode(column: "key_hash", as: String.self) })
        }
        return Round(
            categories: categories, users: users, inboxKeys: inboxKeys, devices: devices, pushDevices: pushDevices, goals: goals,
            storedKeys: stored, now: now)
    }

    /// Whether the event is new: no idempotency key, or one neither stored nor seen earlier in this round.
    package func isFirstSight(_ event: ActivityEvent) -> Bool {
        guard let hash = event.idempotencyKeyHash else { return true }
        guard !storedKeys.contains(hash), !newKeys.contains(hash) else { return false }
        newKeys.append(hash)
        return true
    }

    package func sawActivity(of device: Device, on day: String) {
        if let stored = device.lastMonitoredDay, stored >= day { return }
        if let seen = lastDays[device.id], seen >= day { return }
        lastDays[device.id] = day
    }

    /// A goal an event counts for: the goal of one of the event's categories, with the activity key and span it
    /// is recorded under.
    package struct Hit {
        package let goal: Goal
        package let key: ActivityBook.Key
        package let span: ActivitySpan
        /// The classifier's view of an Android phone counts only for no-go goals.
        package let onlyNoGo: Bool
        /// When the goal's version in force is looked up.
        package let versionTime: Date
    }

    /// The user's goals on the event's categories (classifier names, or app names for app activity).
    package func hits(of event: ActivityEvent, device: Device) throws -> [Hit] {
        let names = Set(event.categoryNames)
        let matched = Set(
            categories.filter { !names.isDisjoint(with: event.matchApplications ? $0.applications : $0.classifierCategories) }.map(\.id))
        guard !matched.isEmpty else { return [] }
        // Yona's apps measure app use on Android themselves; the classifier's view of an Android phone counts
        // only for no-go goals (a budget would count the same minutes twice).
        let onlyNoGo = !event.matchApplications && device.operatingSystem == "ANDROID"
        // The event as it is (a network event is an instant): a new activity lasts at least a minute, an extended
        // one ends where its latest event ends (Yona's: two visits 4 minutes apart are 4 minutes, not 5).
        let span = ActivitySpan(start: event.startTime, end: max(event.endTime ?? event.startTime, event.startTime))
        // An activity counts for the goal as it was when it happened (a late event, a goal changed since).
        // (Within the 10 s a device's clock may be off, as Yona: a goal made just after counts.)
        let versionTime = event.startTime.addingTimeInterval(AnalysisService.maxFutureSkew)
        return try goals[event.userAnonymizedID, default: []].filter { matched.contains($0.$activityCategory.id) }.map { goal in
            Hit(
                goal: goal, key: .init(device: device.id, goal: try goal.requireID(), app: event.app?.tag ?? ActivityApp.networkTag), span: span,
                onlyNoGo: onlyNoGo, versionTime: versionTime)
        }
    }

    /// Reads what the round's events will ask the store (where each one's candidate activity lies; for a no-go
    /// goal, whether another activity is near) in one statement per kind, before the first event. The round writes
    /// nothing before its end, so these are the answers each event would have read on its own, without a round
    /// trip per event (a round of 30 conflicts made 60). Only the classifier's events, each usually a question of its
    /// own: an app's batch is sorted, so the book answers most of its events from its first probe, and asking ahead
    /// for every one of up to hundreds of events would cost more than it saves. A goal whose older version applies is
    /// left to the event too.
    package func prefetch(_ reports: [ActivityReport], on tx: any Database) async throws {
        var probes: Set<ActivityBook.ProbeQuery> = []
        var neighbours: Set<ActivityBook.NeighbourQuery> = []
        for report in reports where users.contains(report.userAnonymizedID) {
            guard let device = devices[DeviceKey(user: report.userAnonymizedID, index: report.deviceIndex)] else { continue }
            for event in report.events where !event.matchApplications {
                for hit in try hits(of: event, device: device) where hit.goal.creationTime <= hit.versionTime {
                    let isNoGo = hit.goal.spec.isNoGo
                    if hit.onlyNoGo && !isNoGo { continue }
                    probes.insert(ActivityBook.ProbeQuery(key: hit.key, span: hit.span))
                    if isNoGo { neighbours.insert(ActivityBook.NeighbourQuery(key: hit.key, span: hit.span)) }
                }
            }
        }
        try await activities.prefetch(probes: probes, neighbours: neighbours, on: tx)
    }

    /// The buddies `user` shares with (sending status accepted) and the inbox keys of the user and them. The first
    /// call reads the buddies of every user of the round at once, with their inbox keys (one round trip).
    package func sharingBuddies(of user: UUID, on tx: any Database) async throws -> ([UUID], [UUID: [UInt8]]) {
        if sharing == nil {
            var found: [UUID: [UUID]] = [:]
            for row in try await tx.sql.raw(
                """
                SELECT b.owner_user_anonymized_id AS owner, b.buddy_user_anonymized_id AS buddy, u.anonymous_inbox_public_key AS inbox_key,
                d.id AS device
                FROM \(unsafeRaw: BuddyAnonymized.schema) b LEFT JOIN \(unsafeRaw: UserAnonymized.schema) u ON u.id = b.buddy_user_anonymized_id
                LEFT JOIN \(unsafeRaw: DeviceAnonymized.schema) d ON d.user_anonymized_id = b.buddy_user_anonymized_id
                AND \(unsafeRaw: OutboxWriter.canGetPushes("d"))
                WHERE b.owner_user_anonymized_id IN (\(binds: Array(users))) AND b.sending_status = \(bind: PrivateBuddy.Status.accepted.rawValue)
                AND b.buddy_user_anonymized_id IS NOT NULL
                """
            ).all() {
                let buddy = try row.decode(column: "buddy", as: UUID.self)
                let owner = try row.decode(column: "owner", as: UUID.self)
                // one row per device of the buddy (or one without): the buddy once per owner
                if !found[owner, default: []].contains(buddy) { found[owner, default: []].append(buddy) }
                if let key = try row.decode(column: "inbox_key", as: Data?.self) { inboxKeys[buddy] = Array(key) }
                if pushDevices[buddy] == nil { pushDevices[buddy] = [] }
                if let device = try row.decode(column: "device", as: UUID?.self) { pushDevices[buddy]?.insert(device) }
            }
            sharing = found
        }
        return (sharing?[user] ?? [], inboxKeys)
    }

    package func queue(_ more: [MessageWriter.Delivery]) {
        deliveries += more
        let payloads = more.map { ($0.recipient, $0.payload) }
        let keys = inboxKeys
        sealing.append(Task { try MessageWriter.seal(payloads, keys: keys) })
    }

    package let activities = ActivityBook()

    /// Writes the round's messages and their pushes (one insert each), stores the round's idempotency keys (one statement) and moves "last seen" forward (one statement per
    /// device whose day changed: once a day each).
    package func finish(on tx: any Database) async throws {
        try await activities.write(on: tx)
        if !deliveries.isEmpty {
            var sealed: [Data] = []
            for task in sealing { sealed += try await task.value }
            // The recipients' devices were read with them, unless a recipient is not one the round read.
            let known = deliveries.allSatisfy { pushDevices[$0.recipient] != nil }
            _ = try await MessageWriter.write(
                deliveries, sealed: sealed, on: tx, now: now, pushDevices: known ? pushDevices.mapValues { Array($0) } : nil)
        }
        if !newKeys.isEmpty {
            let rows = newKeys.map { SQLQueryString("(\(bind: UUID()), \(bind: $0), \(bind: now))") }
            try await tx.sql.raw(
                "INSERT INTO \(unsafeRaw: ProcessedAnalyzerEvent.schema) (id, key_hash, processed_at) VALUES \(rows.joined(separator: ", "))"
            ).run()
        }
        for (device, day) in lastDays {
            try await tx.sql.raw(
                """
                UPDATE \(unsafeRaw: DeviceAnonymized.schema) SET last_monitored_activity_date = \(bind: day)
                WHERE id = \(bind: device) AND (last_monitored_activity_date IS NULL OR last_monitored_activity_date < \(bind: day))
                """
            ).run()
        }
    }
}

/// The activities a round touched, per device, goal and app, so that several events of one device in one round cost
/// one index probe instead of one per event, and the round writes its new and extended activities at its end (one
/// insert, one update per extended activity).
///
/// An activity is extended only by events of its own app (network activity by network activity), as Yona's: network
/// activity within 15 minutes of it, app activity only where it overlaps or touches it (a session the phone reports
/// after a pause is a new one). The candidate for an event is the first activity (by end) of its key that ends no
/// earlier than that gap before the event starts. A probe of the `(device, goal, end_time)` index from a bound `from` returns the first stored activity
/// ending at or after it, so every other stored activity the round has not seen ends no earlier than that one did:
/// for a later event (bound at or after `from`) the round's own knowledge decides as long as its candidate ends no
/// later than that. Otherwise, or for an earlier bound, it probes again.
private final class ActivityBook {
    package struct Key: Hashable {
        package let device: UUID
        package let goal: UUID
        /// `ActivityApp.tag`; `ActivityApp.networkTag` for network activity.
        package let app: String

        /// How far apart an event and an activity may lie and still be one.
        package var gap: TimeInterval { app == ActivityApp.networkTag ? AnalysisService.mergeGap : 0 }
    }

    /// Where an event's candidate activity is looked for: the first stored activity of the key ending at or after
    /// `from`.
    package struct ProbeQuery: Hashable {
        package let key: Key
        package let from: Date

        package init(key: Key, span: ActivitySpan) {
            self.init(key: key, from: span.start.addingTimeInterval(-key.gap))
        }

        package init(key: Key, from: Date) {
            self.key = key
            self.from = from
        }
    }

    /// Whether any stored activity of the device on the goal (of any app) lies between `from` and `to`.
    package struct NeighbourQuery: Hashable {
        package let device: UUID
        package let goal: UUID
        package let from: Date
        package let to: Date

        /// Within 15 minutes of `span`.
        package init(key: Key, span: ActivitySpan) {
            device = key.device
            goal = key.goal
            from = span.start.addingTimeInterval(-AnalysisService.mergeGap)
            to = span.end.addingTimeInterval(AnalysisService.mergeGap)
        }
    }

    private struct Stored {
        package let id: UUID
        package let span: ActivitySpan
    }

    private struct Known {
        package var span: ActivitySpan
        /// The anonymized user of a new activity (nil for a stored one).
        package let user: UUID?
        /// The app of a new app activity, sealed when the round writes it.
        package let app: ActivityApp?
        package let key: Key
        package let isNew: Bool
        package var changed: Bool
    }

    private struct Probe {
        /// The bound of the last probe.
        package let from: Date
        /// The stored end of the first stored activity ending at or after `from` (nil: none), as stored then.
        package let firstStoredEnd: Date?
    }

    private var known: [UUID: Known] = [:]
    private var byKey: [Key: [UUID]] = [:]
    private var probes: [Key: Probe] = [:]
    /// The store's answers read ahead for the round (`prefetch`), apart from `probes` (the bound each key was last
    /// probed from); a query that is not here is asked when needed.
    private var probeAnswers: [ProbeQuery: Stored?] = [:]
    private var neighbourAnswers: [NeighbourQuery: Bool] = [:]

    /// Reads the answers to the queries (one statement per 100 of each kind).
    package func prefetch(probes probeQueries: Set<ProbeQuery>, neighbours neighbourQueries: Set<NeighbourQuery>, on tx: any Database) async throws {
        for chunk in Array(probeQueries).chunked(Self.perStatement) {
            let parts = chunk.enumerated().map { n, query in
                SQLQueryString(
                    """
                    SELECT \(unsafeRaw: String(n)) AS n, id, start_time, end_time FROM (\(Self.firstEnding(query))) AS p\(unsafeRaw: String(n))
                    """)
            }
            var found: [Int: Stored] = [:]
            for row in try await tx.sql.raw(parts.joined(separator: " UNION ALL ")).all() {
                found[try row.decode(column: "n", as: Int.self)] = try Self.stored(row)
            }
            for (n, query) in chunk.enumerated() { probeAnswers.updateValue(found[n], forKey: query) }
        }
        for chunk in Array(neighbourQueries).chunked(Self.perStatement) {
            let parts = chunk.enumerated().map { n, query in
                SQLQueryString("SELECT \(unsafeRaw: String(n)) AS n WHERE EXISTS (\(Self.anyBetween(query)))")
            }
            let near = Set(try await tx.sql.raw(parts.joined(separator: " UNION ALL ")).all().map { try $0.decode(column: "n", as: Int.self) })
            for (n, query) in chunk.enumerated() { neighbourAnswers[query] = near.contains(n) }
        }
    }

    /// Queries per statement of `prefetch` (SQLite allows 500 parts in a compound statement).
    private static let perStatement = 100

    private static func firstEnding(_ query: ProbeQuery) -> SQLQueryString {
        """
        SELECT id, start_time, end_time FROM \(unsafeRaw: Activity.schema)
        WHERE device_anonymized_id = \(bind: query.key.device) AND goal_id = \(bind: query.key.goal) AND end_time >= \(bind: query.from)
        AND app_tag = \(bind: query.key.app)
        ORDER BY end_time LIMIT 1
        """
    }

    private static func anyBetween(_ query: NeighbourQuery) -> SQLQueryString {
        """
        SELECT id FROM \(unsafeRaw: Activity.schema)
        WHERE device_anonymized_id = \(bind: query.device) AND goal_id = \(bind: query.goal) AND end_time >= \(bind: query.from)
        AND start_time <= \(bind: query.to)
        """
    }

    private static func stored(_ row: any SQLRow) throws -> Stored {
        Stored(
            id: try row.decode(column: "id", as: UUID.self),
            span: ActivitySpan(start: try row.decode(column: "start_time", as: Date.self), end: try row.decode(column: "end_time", as: Date.self)))
    }

    /// Records `span` on the device's goal for its app: extends the candidate activity or starts one. Returns the id
    /// of the one it started (nil when it extended one).
    package func merge(_ span: ActivitySpan, key: Key, app: ActivityApp?, user: UUID, on tx: any Database) async throws -> UUID? {
        let from = ProbeQuery(key: key, span: span).from
        if needsProbe(key, from: from) { try await probe(key, from: from, on: tx) }
        if let (id, current) = firstKnown(key, from: from), current.start <= span.end.addingTimeInterval(key.gap) {
            guard span.start < current.start || span.end > current.end else { return nil }
            known[id]?.span = ActivitySpan(start: min(current.start, span.start), end: max(current.end, span.end))
            known[id]?.changed = true
            return nil
        }
        let id = UUID()
        let lasting = ActivitySpan(start: span.start, end: max(span.end, span.start.addingTimeInterval(AnalysisService.minimumDuration)))
        known[id] = Known(span: lasting, user: user, app: app, key: key, isNew: true, changed: true)
        byKey[key, default: []].append(id)
        return id
    }

    /// Whether an activity of the device on the goal other than `started` (the one `span` just started), of any app,
    /// lies within 15 minutes of `span`: the round's own first (they may have grown), then the store.
    package func hasNeighbour(of span: ActivitySpan, besides started: UUID, key: Key, on tx: any Database) async throws -> Bool {
        let query = NeighbourQuery(key: key, span: span)
        for (id, activity) in known where id != started && activity.key.device == key.device && activity.key.goal == key.goal {
            if activity.span.end >= query.from, activity.span.start <= query.to { return true }
        }
        if let near = neighbourAnswers[query] { return near }
        return try await tx.sql.raw("\(Self.anyBetween(query)) LIMIT 1").first() != nil
    }

    /// Whether the round's knowledge could miss the candidate: no probe from a bound this early yet, or a stored
    /// activity the round has not read could end before the candidate it knows.
    private func needsProbe(_ key: Key, from: Date) -> Bool {
        guard let probe = probes[key], from >= probe.from else { return true }
        guard let firstStoredEnd = probe.firstStoredEnd else { return false }
        guard let (_, candidate) = firstKnown(key, from: from) else { return true }
        return candidate.end > firstStoredEnd
    }

    private func firstKnown(_ key: Key, from: Date) -> (UUID, ActivitySpan)? {
        (byKey[key] ?? []).compactMap { id in known[id].map { (id, $0.span) } }.filter { $0.1.end >= from }.min { $0.1.end < $1.1.end }
    }

    /// Reads the first stored activity ending at or after `from` (read ahead, or now) and remembers it (the round's
    /// version wins if it already touched it).
    private func probe(_ key: Key, from: Date, on tx: any Database) async throws {
        let query = ProbeQuery(key: key, from: from)
        let first: Stored?
        if let answer = probeAnswers[query] {
            first = answer
        } else {
            first = try await tx.sql.raw(Self.firstEnding(query)).first().map(Self.stored)
        }
        probes[key] = Probe(from: from, firstStoredEnd: first?.span.end)
        guard let first else { return }
        if known[first.id] == nil {
            known[first.id] = Known(span: first.span, user: nil, app: nil, key: key, isNew: false, changed: false)
            byKey[key, default: []].append(first.id)
        }
    }

    /// Inserts the new activities (one statement) and updates the extended ones.
    package func write(on tx: any Database) async throws {
        let rows = try known.compactMap { id, activity -> SQLQueryString? in
            guard activity.isNew, let user = activity.user else { return nil }
            let sealed = try activity.app?.sealedName()
            return """
                (\(bind: id), \(bind: user), \(bind: activity.key.device), \(bind: activity.key.goal), \(bind: activity.span.start), \
                \(bind: activity.span.end), \(bind: activity.key.app), \(bind: sealed))
                """
        }
        if !rows.isEmpty {
            try await tx.sql.raw(
                """
                INSERT INTO \(unsafeRaw: Activity.schema)
                (id, user_anonymized_id, device_anonymized_id, goal_id, start_time, end_time, app_tag, app_sealed)
                VALUES \(rows.joined(separator: ", "))
                """
            ).run()
        }
        for (id, activity) in known where !activity.isNew && activity.changed {
            try await tx.sql.raw(
                """
                UPDATE \(unsafeRaw: Activity.schema) SET start_time = \(bind: activity.span.start), end_time = \(bind: activity.span.end)
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }
}
