import FluentKit
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import ServiceLifecycle
import YonaDelivery
import YonaDomain
import YonaObservability
import YonaStore

/// Push settings (push.md "Settings").
package struct PushSettings: Sendable {
    package var leaseSeconds: TimeInterval = 60
    package var backoffSeconds: TimeInterval = 1
    package var maxAgeSeconds: TimeInterval = 86_400
    package var concurrency: Int = 64
    package var tokenStaleDays: Int = 60
    package var pollInterval: TimeInterval = 0.5
    /// The least time between two pushes to one device from this process (`YONA_PUSH_MIN_INTERVAL_SECONDS`; 0: none).
    /// A push due sooner waits, and what comes meanwhile folds into it.
    package var minimumIntervalSeconds: TimeInterval = 0
    package var workersEnabled = true
    /// Keep the last data map per token for `/test/firebase/messages/last/{instanceId}` (test servers only).
    package var recordDeliveries = false

    package init(
        leaseSeconds: TimeInterval = 60, backoffSeconds: TimeInterval = 1, maxAgeSeconds: TimeInterval = 86_400, concurrency: Int = 64,
        tokenStaleDays: Int = 60, pollInterval: TimeInterval = 0.5
    ) {
        self.leaseSeconds = leaseSeconds
        self.backoffSeconds = backoffSeconds
        self.maxAgeSeconds = maxAgeSeconds
        self.concurrency = concurrency
        self.tokenStaleDays = tokenStaleDays
        self.pollInterval = pollInterval
    }
}

/// Drains the push outbox: claims due rows (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so any number of
/// instances can share the work), sends them through the provider, and records each outcome (a delivered row is
/// deleted). A claim is a lease: rows of a worker that died are claimed again once it lapses. Per device, pushes go
/// out in the order their messages were created.
package struct PushDispatcher: Sendable {
    package let db: any Database
    package let provider: any PushProvider
    package let settings: PushSettings
    package let publicBaseURL: String
    package let skipLocked: Bool
    package let logger: Logger
    package var metrics: YonaMetrics? = nil
    /// When this dispatcher last pushed each device, for `minimumIntervalSeconds`.
    package let recent = RecentPushes()
    /// Rows the provider took whose finish has not reached the database yet (issue 36).
    package let unfinished = DeliveredRows()

    package struct Claimed: Sendable {
        package let id: UUID
        package let deviceID: UUID
        package let messageID: Int64
        package let attempts: Int
        package let createdAt: Date
        /// The device's push address when the row was claimed (nil once it was cleared), as stored
        /// (`PushAddress.storedExpression`): the compare-and-set that clears a dead one matches the column's own text.
        package let storedAddress: String?
        package var address: PushAddress? { storedAddress.flatMap(PushAddress.init(stored:)) }
    }

    /// Clears push addresses (of every kind) the app has not sent again for `tokenStaleDays` (push.md): such an
    /// address is most likely dead, and a device without one gets no pushes until its app sends a new one.
    @discardableResult
    package func pruneStaleTokens(now: Date = Date()) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Double(settings.tokenStaleDays) * 86_400)
        let stale = try await DeviceAnonymized.query(on: db)
            .group(.or) { $0.filter(\.$firebaseInstanceID != nil).filter(\.$apnsToken != nil).filter(\.$webPushSubscription != nil) }
            .filter(\.$firebaseInstanceIDUpdatedAt < cutoff).all()
        for device in stale {
            try await DeviceAnonymized.query(on: db).filter(\.$id == device.id!)
                .filter(\.$firebaseInstanceIDUpdatedAt < cutoff)
                .set(\.$firebaseInstanceID, to: nil).set(\.$apnsToken, to: nil).set(\.$webPushSubscription, to: nil).update()
        }
        if !stale.isEmpty { logger.info("stale push tokens pruned", metadata: ["count": .stringConvertible(stale.count)]) }
        for _ in stale { metrics?.tokenCleared(reason: "STALE") }
        return stale.count
    }

    /// One round: claims up to `limit` due rows (at most one per device) and finishes each. Returns how many were
    /// claimed. The workers run `drain()`; a single round is what tests step through.
    @discardableResult
    package func drainOnce(now: Date = Date(), limit: Int = 256) async throws -> Int {
        try await session(now: now, limit: limit, claimOnce: true)
    }

    /// Sends everything that is due, as a pipeline: up to `concurrency` sends in flight at all times, the next claim
    /// running while earlier rows are being sent, and delivered rows deleted in one statement per flush beside the
    /// sends. The database and the network work at the same time, and no send waits for the slowest one of a round.
    /// Returns how many rows it claimed. It stops claiming after `claimingFor` (the workers' rounds stay bounded in
    /// time, so a round that runs far longer is stuck and abandoned: `BackgroundJob`); the next round goes on at once.
    @discardableResult
    package func drain(limit: Int = 512, claimingFor budget: Duration? = nil) async throws -> Int {
        try await session(now: nil, limit: limit, claimOnce: false, claimUntil: budget.map { ContinuousClock.now + $0 })
    }

    private enum Event: Sendable {
        case claimed([Claimed])
        /// A send ended: the row's id when it was delivered; the error of the database call after it, if any.
        case sent(UUID?, failure: (any Error)?)
        /// A finish ended: the ids it could not finish (the database failed), to be finished again.
        case finished(unfinished: [UUID], failure: (any Error)?)
        case claimFailed(any Error)
    }

    /// `now` fixed (tests) or the clock's (`nil`); `claimOnce` stops after the first claim's rows.
    ///
    /// A failing database call never cancels the sends in flight (a cancelled send that the provider had already
    /// accepted would go again after its lease): the session stops claiming, lets every send end, finishes what was
    /// delivered, retrying the finish while the rows' lease lasts (the database may be back by then), and only then
    /// throws the first failure.
    private func session(now fixedNow: Date?, limit: Int, claimOnce: Bool, claimUntil: ContinuousClock.Instant? = nil) async throws -> Int {
        func outOfTime() -> Bool { claimUntil.map { ContinuousClock.now >= $0 } ?? false }
        // A cheap read first, so an idle worker does not take the write lock on every poll.
        guard try await anythingDue(at: fixedNow ?? Date()) else { return 0 }
        let concurrency = max(1, settings.concurrency)
        let (total, failure) = await withTaskGroup(of: Event.self) { group -> (Int, (any Error)?) in
            var total = 0
            var queue: [Claimed] = []
            var queued = 0 // rows of `queue` before this index are taken
            var claiming = false
            var exhausted = false
            var sending = 0
            var delivered: [UUID] = []
            var finishing = false
            var failure: (any Error)? = nil
            var finishRetry: (delay: Duration, until: ContinuousClock.Instant)? = nil
            func claimMore() {
                claiming = true
                group.addTask {
                    do { return .claimed(try await claim(now: fixedNow ?? Date(), limit: limit)) } catch { return .claimFailed(error) }
                }
            }
            func failed(_ error: any Error) {
                if failure == nil { failure = error }
                exhausted = true
            }
            claimMore()
            while let event = await group.next() {
                switch event {
                case .claimed(let rows):
                    claiming = false
                    total += rows.count
                    if rows.isEmpty || claimOnce || outOfTime() { exhausted = true }
                    queue.removeFirst(queued)
                    queued = 0
                    queue.append(contentsOf: rows)
                case .claimFailed(let error):
                    claiming = false
                    failed(error)
                case .sent(let id, let error):
                    sending -= 1
                    if let id { delivered.append(id) }
                    if let error { failed(error) }
                case .finished(let notDeleted, let error):
                    finishing = false
                    if let error {
                        failed(error)
                        delivered.insert(contentsOf: notDeleted, at: 0)
                        let retry = finishRetry ?? (.milliseconds(250), .now + .seconds(settings.leaseSeconds * 0.8))
                        // past the lease another worker may have claimed the rows again: leave them to it
                        if ContinuousClock.now > retry.until { delivered = [] }
                        finishRetry = (min(retry.delay * 2, .seconds(5)), retry.until)
                    } else if failure == nil, !claimOnce, !outOfTime() {
                        // the rows just finished may have been the heads that held their devices' next pushes back
                        exhausted = false
                    }
                }
                while sending < concurrency, queued < queue.count, failure == nil {
                    let row = queue[queued]
                    queued += 1
                    sending += 1
                    group.addTask {
                        do { return .sent(try await deliver(row) ? row.id : nil, failure: nil) } catch { return .sent(nil, failure: error) }
                    }
                }
                if !finishing, !delivered.isEmpty, delivered.count >= concurrency || queued == queue.count || failure != nil {
                    let ids = delivered
                    let delay = finishRetry?.delay
                    delivered = []
                    finishing = true
                    group.addTask {
                        // a cancelled wait (shutdown) ends early on purpose: the delivered rows are finished all the same
                        if let delay { try? await Task.sleep(for: delay) }
                        do {
                            try await finishDelivered(ids)
                            return .finished(unfinished: [], failure: nil)
                        } catch {
                            return .finished(unfinished: ids, failure: error)
                        }
                    }
                }
                // keep about a claim's worth of rows ahead of the sends, so they never wait for a claim to come back;
                // on a graceful shutdown claim nothing more: what is claimed goes out and is finished, then the drain ends
                if Task.isShuttingDownGracefully { exhausted = true }
                if !claiming, !exhausted, queue.count - queued < max(concurrency, limit) { claimMore() }
            }
            return (total, failure)
        }
        if let failure { throw failure }
        return total
    }

    /// The table's lifecycle (`Outbox`): per device, in the order the messages were created. Pushes are delayed by
    /// the one backoff rule from `backoffSeconds`, at most an hour apart, and given up after `maxAgeSeconds`.
    private var core: Outbox<UUID> {
        PushOutbox.lifecycle(
            on: db, skipLocked: skipLocked, leaseSeconds: settings.leaseSeconds,
            backoff: Backoff(base: settings.backoffSeconds, cap: 3600, retryAfterCap: settings.maxAgeSeconds), maxAgeSeconds: settings.maxAgeSeconds)
    }

    /// Whether a row is due and not leased (one read through the due index, no lock).
    private func anythingDue(at now: Date) async throws -> Bool {
        try await core.anythingDue(at: now)
    }

    /// How long a failed row stays, for an operator to read its `last_error`.
    package static let finishedRetention: TimeInterval = 3600

    /// Deletes failed rows older than `finishedRetention`, in chunks (short statements beside the drain). Delivered
    /// rows are deleted when they are sent: the outbox does not grow with history, and it does not keep which device
    /// was told of which message.
    @discardableResult
    package func purgeFinished(now: Date = Date(), chunk: Int = 10_000) async throws -> Int {
        try await core.purgeFailed(before: now.addingTimeInterval(-Self.finishedRetention), chunk: chunk)
    }

    /// Delivered rows are done: deleted in one statement (a delete writes no index entries, unlike an update).
    private func finishDelivered(_ ids: [UUID]) async throws {
        try await core.delete(ids)
        unfinished.remove(ids)
    }

    /// Claims due rows that head their device's queue: a row waits while an older one of its device is open, so each
    /// device gets its pushes in order. The claim is a lease (`claimed_until`) and nothing else: a row whose worker died
    /// is claimable again once it lapses, and the update touches no indexed column (`ReshapePushOutboxForTheDrain`).
    /// Both conditions are probes of partial indexes of open rows, and rows come in due order from the index without a
    /// sort. The token comes back with the claim.
    private func claim(now: Date, limit: Int) async throws -> [Claimed] {
        let rows = try await core.claim(
            now: now, limit: limit, returning: PushOutbox.claimedColumns(addressExpression: PushAddress.storedExpression))
        return try rows.map { row in
            Claimed(
                id: try row.decode(column: "id", as: UUID.self),
                deviceID: try row.decode(column: "device_anonymized_id", as: UUID.self),
                messageID: try row.decode(column: "message_id", as: Int64.self),
                attempts: try row.decode(column: "attempts", as: Int.self),
                createdAt: try row.decode(column: "created_at", as: Date.self),
                storedAddress: try row.decode(column: "address", as: String?.self))
        }
    }

    /// Sends one claimed row and records any outcome but success; returns whether it was delivered (the
    /// caller deletes delivered rows, many in one statement).
    private func deliver(_ row: Claimed) async throws -> Bool {
        // The provider took this row before the database went away, and its finish never got through (the round was
        // abandoned, or gave up at the lease): it is finished now, not sent again. Only this process knows; another
        // instance, or this one after a restart, sends it once more.
        if unfinished.contains(row.id) { return true }
        guard let address = row.address else {
            // The app's address was cleared (or the device went): nothing to send until it sends a new one.
            try await core.settle(row.id, attempts: row.attempts, createdAt: row.createdAt, outcome: .deadAddress("NO_TOKEN"), now: Date())
            metrics?.push(outcome: "dropped", errorCode: "NO_TOKEN")
            return false
        }
        let interval = settings.minimumIntervalSeconds
        if interval > 0, let last = recent.lastPush(to: row.deviceID), Date().timeIntervalSince(last) < interval {
            // pushed a moment ago: this one waits out the interval, and what comes meanwhile folds into it
            try await PushOutbox.putOff(row.id, until: last.addingTimeInterval(interval), on: db)
            metrics?.pushPutOff()
            return false
        }
        let push = OutgoingPush(address: address, messageID: row.messageID, publicBaseURL: publicBaseURL)
        let outcome = await provider.send(push)
        let now = Date()
        switch outcome {
        case .delivered:
            unfinished.insert(row.id, at: now)
            if interval > 0 { recent.pushed(row.deviceID, at: now, forgetBefore: now.addingTimeInterval(-interval)) }
            metrics?.push(outcome: "sent", errorCode: "")
            if settings.recordDeliveries { await recordDelivery(token: address.secret, data: push.data, at: now) }
            return true
        case .retry(let after, let quota, let code):
            // FCM's quota (429) waits at least a minute, whatever it said.
            let outcome = DeliveryOutcome.retry(code, after: quota ? max(after ?? 0, 60) : after)
            if try await core.settle(row.id, attempts: row.attempts, createdAt: row.createdAt, outcome: outcome, now: now) == .gaveUp {
                logger.warning("push given up after its maximum age", metadata: ["error_code": .string(code)])
                metrics?.push(outcome: "failed", errorCode: code)
            } else {
                metrics?.push(outcome: "retry", errorCode: code)
                metrics?.pushRetry()
                // a push queued for the device while this one was out names a newer message: it goes instead
                try await PushOutbox.foldIntoWaiting(row.id, on: db)
            }
        case .tokenInvalid(let reason):
            metrics?.push(outcome: "token_invalid", errorCode: reason)
            metrics?.tokenCleared(reason: reason)
            // Compare-and-set on the text the claim read: an address the app replaced meanwhile survives.
            let column = address.column.name
            let stored = PushAddress.columnValue(ofStored: row.storedAddress ?? "")
            try await db.sql.raw(
                """
                UPDATE \(unsafeRaw: DeviceAnonymized.schema) SET \(unsafeRaw: column) = NULL
                WHERE id = \(bind: row.deviceID) AND \(unsafeRaw: column) = \(bind: stored)
                """
            ).run()
            logger.info(
                "push token cleared",
                metadata: [
                    "push_kind": .string(address.kind), "token_hash": .string(TokenHash.of(address.secret)), "reason": .string(reason),
                ])
            try await core.settle(row.id, attempts: row.attempts, createdAt: row.createdAt, outcome: .deadAddress(reason), now: now)
        case .rejected(let code):
            logger.error("push rejected by the provider", metadata: ["error_code": .string(code)])
            metrics?.push(outcome: "rejected", errorCode: code)
            try await core.settle(row.id, attempts: row.attempts, createdAt: row.createdAt, outcome: .rejected(code), now: now)
        }
        return false
    }

    /// Keeps the last push per token for the test server. Phones sharing a token are pushed side by side, and two
    /// replacements of one token's row collide on its unique key (PostgreSQL refuses the later insert): tried again,
    /// and never allowed to fail the round, which would send its delivered pushes again.
    private func recordDelivery(token: String, data: [String: String], at now: Date) async {
        let hash = TokenHash.of(token)
        for attempt in 1...5 {
            do {
                try await db.transaction { tx in
                    try await PushDelivery.query(on: tx).filter(\.$tokenHash == hash).delete()
                    try await PushDelivery(id: UUID(), tokenHash: hash, data: data, deliveredAt: now).create(on: tx)
                }
                return
            } catch {
                if attempt == 5 {
                    logger.warning(
                        "test server: the last push of a token was not recorded", metadata: ["error": .string(String(reflecting: type(of: error)))])
                }
            }
        }
    }

    package init(
        db: any Database, provider: any PushProvider, settings: PushSettings, publicBaseURL: String, skipLocked: Bool, logger: Logger,
        metrics: YonaMetrics? = nil
    ) {
        self.db = db
        self.provider = provider
        self.settings = settings
        self.publicBaseURL = publicBaseURL
        self.skipLocked = skipLocked
        self.logger = logger
        self.metrics = metrics
    }
}

/// When a dispatcher last pushed each device (a device it has not pushed within the interval is forgotten). Per
/// process: with several instances draining, a device gets at most one push per interval from each.
package final class RecentPushes: Sendable {
    private let last = NIOLockedValueBox<[UUID: Date]>([:])

    package init() {}

    package func lastPush(to device: UUID) -> Date? { last.withLockedValue { $0[device] } }

    package func pushed(_ device: UUID, at time: Date, forgetBefore cutoff: Date) {
        last.withLockedValue { map in
            map[device] = time
            if map.count >= 4096, map.count.isMultiple(of: 1024) { map = map.filter { $0.value >= cutoff } }
        }
    }
}

/// The rows of the push outbox the provider accepted and that are not yet deleted, by id, with when they went. A row
/// whose delete failed (the database went away) is claimed again once its lease lapses; found here, it is finished
/// without a second send. Entries older than a day are dropped (no row waits that long; it is given up by then).
package final class DeliveredRows: Sendable {
    private let sent = NIOLockedValueBox<[UUID: Date]>([:])

    package init() {}

    package func insert(_ id: UUID, at time: Date) {
        sent.withLockedValue { map in
            map[id] = time
            if map.count >= 4096, map.count.isMultiple(of: 1024) { map = map.filter { $0.value >= time.addingTimeInterval(-86_400) } }
        }
    }

    package func contains(_ id: UUID) -> Bool { sent.withLockedValue { $0[id] != nil } }

    package func remove(_ ids: [UUID]) {
        sent.withLockedValue { map in
            for id in ids { map[id] = nil }
        }
    }
}
