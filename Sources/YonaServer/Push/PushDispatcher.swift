import Fluent
import Foundation
import Logging
import SQLKit
import Vapor

/// Push settings (push.md "Settings").
struct PushSettings: Sendable {
    var leaseSeconds: TimeInterval = 60
    var backoffSeconds: TimeInterval = 1
    var maxAgeSeconds: TimeInterval = 86_400
    var concurrency: Int = 64
    var tokenStaleDays: Int = 60
    var pollInterval: TimeInterval = 0.5
    var workersEnabled = true
    /// Keep the last data map per token for `/test/firebase/messages/last/{instanceId}` (test servers only).
    var recordDeliveries = false
}

/// Drains the push outbox: claims due rows (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so any number of
/// instances can share the work), sends them through the provider, and records each outcome. A claim is a
/// lease: rows of a worker that died are claimed again once it lapses. Per device, pushes go out in the
/// order their messages were created.
struct PushDispatcher: Sendable {
    let db: any Database
    let provider: any PushProvider
    let settings: PushSettings
    let publicBaseURL: String
    let skipLocked: Bool
    let logger: Logger
    var metrics: YonaMetrics? = nil

    struct Claimed: Sendable {
        let id: UUID
        let deviceID: UUID
        let messageID: Int64
        let attempts: Int
        let createdAt: Date
    }

    /// Clears Instance IDs the app has not sent again for `tokenStaleDays` (push.md): such a token is most
    /// likely dead, and a device without one gets no pushes until its app sends a new one.
    @discardableResult
    func pruneStaleTokens(now: Date = Date()) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Double(settings.tokenStaleDays) * 86_400)
        let stale = try await DeviceAnonymized.query(on: db)
            .filter(\.$firebaseInstanceID != nil).filter(\.$firebaseInstanceIDUpdatedAt < cutoff).all()
        for device in stale {
            try await DeviceAnonymized.query(on: db).filter(\.$id == device.id!)
                .filter(\.$firebaseInstanceIDUpdatedAt < cutoff)
                .set(\.$firebaseInstanceID, to: nil).update()
        }
        if !stale.isEmpty { logger.info("stale push tokens pruned", metadata: ["count": .stringConvertible(stale.count)]) }
        for _ in stale { metrics?.tokenCleared(reason: "STALE") }
        return stale.count
    }

    /// One round: claim up to `limit` due rows and finish each. Returns how many were claimed.
    @discardableResult
    func drainOnce(now: Date = Date(), limit: Int = 256) async throws -> Int {
        let claimed = try await claim(now: now, limit: limit)
        guard !claimed.isEmpty else { return 0 }
        let tokens = try await DeviceAnonymized.query(on: db).filter(\.$id ~~ claimed.map(\.deviceID)).all()
            .reduce(into: [UUID: String]()) { map, device in if let token = device.firebaseInstanceID { map[device.id!] = token } }
        let delivered = try await withThrowingTaskGroup(of: UUID?.self) { group in
            var inFlight = 0
            var delivered: [UUID] = []
            for row in claimed {
                if inFlight >= settings.concurrency {
                    if let id = try await group.next() ?? nil { delivered.append(id) }
                    inFlight -= 1
                }
                group.addTask { try await deliver(row, token: tokens[row.deviceID]) ? row.id : nil }
                inFlight += 1
            }
            for try await id in group { if let id { delivered.append(id) } }
            return delivered
        }
        // The common outcome is finished for the whole round in one statement.
        if !delivered.isEmpty {
            try await db.sql.raw(
                """
                UPDATE push_outbox SET state = 'sent', attempts = attempts + 1, claimed_until = NULL, last_error = NULL
                WHERE id IN (\(binds: delivered))
                """
            ).run()
        }
        return claimed.count
    }

    private func claim(now: Date, limit: Int) async throws -> [Claimed] {
        // A cheap read first, so an idle worker does not take the write lock on every poll.
        let due = try await PendingPush.query(on: db)
            .group(.or) { either in
                either.group(.and) { $0.filter(\.$state == PendingPush.State.pending.rawValue).filter(\.$nextAttemptAt <= now) }
                either.group(.and) { $0.filter(\.$state == PendingPush.State.claimed.rawValue).filter(\.$claimedUntil < now) }
            }
            .count()
        guard due > 0 else { return [] }
        let lock: SQLQueryString = skipLocked ? "FOR UPDATE SKIP LOCKED" : ""
        let rows = try await db.sql.raw(
            """
            UPDATE push_outbox SET state = 'claimed', claimed_until = \(bind: now.addingTimeInterval(settings.leaseSeconds))
            WHERE id IN (
                SELECT p.id FROM push_outbox p
                WHERE ((p.state = 'pending' AND p.next_attempt_at <= \(bind: now))
                       OR (p.state = 'claimed' AND p.claimed_until < \(bind: now)))
                  AND NOT EXISTS (
                      SELECT 1 FROM push_outbox o
                      WHERE o.device_anonymized_id = p.device_anonymized_id AND o.id <> p.id
                        AND o.state IN ('pending', 'claimed') AND o.created_at < p.created_at)
                ORDER BY p.created_at
                LIMIT \(bind: limit)
                \(lock)
            )
            RETURNING id, device_anonymized_id, message_id, attempts, created_at
            """
        ).all()
        return try rows.map { row in
            Claimed(
                id: try row.decode(column: "id", as: UUID.self),
                deviceID: try row.decode(column: "device_anonymized_id", as: UUID.self),
                messageID: try row.decode(column: "message_id", as: Int64.self),
                attempts: try row.decode(column: "attempts", as: Int.self),
                createdAt: try row.decode(column: "created_at", as: Date.self))
        }
    }

    /// Sends one claimed row and records any outcome but success; returns whether it was delivered (the
    /// caller marks delivered rows sent in one statement).
    private func deliver(_ row: Claimed, token: String?) async throws -> Bool {
        guard let token else {
            // The app's token was cleared (or the device went): nothing to send until it sends a new one.
            try await finish(row, state: .failed, error: "NO_TOKEN")
            metrics?.push(outcome: "dropped", errorCode: "NO_TOKEN")
            return false
        }
        let message = PushMessage.make(token: token, messageID: row.messageID, publicBaseURL: publicBaseURL)
        let outcome = await provider.send(message)
        let now = Date()
        switch outcome {
        case .delivered:
            metrics?.push(outcome: "sent", errorCode: "")
            if settings.recordDeliveries { try await recordDelivery(token: token, data: message.data, at: now) }
            return true
        case .retry(let after, let quota, let code):
            let exponential = settings.backoffSeconds * pow(2, Double(row.attempts)) * Double.random(in: 0.5...1.5)
            var delay = max(after ?? 0, exponential)
            if quota { delay = max(delay, 60) }
            if now.addingTimeInterval(delay).timeIntervalSince(row.createdAt) > settings.maxAgeSeconds {
                logger.warning("push given up after its maximum age", metadata: ["error_code": .string(code)])
                metrics?.push(outcome: "failed", errorCode: code)
                try await finish(row, state: .failed, error: code)
            } else {
                metrics?.push(outcome: "retry", errorCode: code)
                metrics?.pushRetry()
                try await PendingPush.query(on: db).filter(\.$id == row.id)
                    .set(\.$state, to: PendingPush.State.pending.rawValue)
                    .set(\.$attempts, to: row.attempts + 1)
                    .set(\.$nextAttemptAt, to: now.addingTimeInterval(delay))
                    .set(\.$claimedUntil, to: nil)
                    .set(\.$lastError, to: code)
                    .update()
            }
        case .tokenInvalid(let reason):
            metrics?.push(outcome: "token_invalid", errorCode: reason)
            metrics?.tokenCleared(reason: reason)
            // Compare-and-set: a token the app replaced meanwhile survives.
            try await DeviceAnonymized.query(on: db).filter(\.$id == row.deviceID)
                .filter(\.$firebaseInstanceID == token)
                .set(\.$firebaseInstanceID, to: nil).update()
            logger.info("push token cleared", metadata: ["token_hash": .string(TokenHash.of(token)), "reason": .string(reason)])
            try await finish(row, state: .failed, error: reason)
        case .rejected(let code):
            logger.error("push rejected by the provider", metadata: ["error_code": .string(code)])
            metrics?.push(outcome: "rejected", errorCode: code)
            try await finish(row, state: .failed, error: code)
        }
        return false
    }

    private func finish(_ row: Claimed, state: PendingPush.State, error: String?) async throws {
        try await PendingPush.query(on: db).filter(\.$id == row.id)
            .set(\.$state, to: state.rawValue)
            .set(\.$attempts, to: row.attempts + 1)
            .set(\.$claimedUntil, to: nil)
            .set(\.$lastError, to: error)
            .update()
    }

    private func recordDelivery(token: String, data: [String: String], at now: Date) async throws {
        let hash = TokenHash.of(token)
        try await db.transaction { tx in
            try await PushDelivery.query(on: tx).filter(\.$tokenHash == hash).delete()
            try await PushDelivery(id: UUID(), tokenHash: hash, data: data, deliveredAt: now).create(on: tx)
        }
    }
}
