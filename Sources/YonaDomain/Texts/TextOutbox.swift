import FluentKit
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import YonaCrypto
import YonaDelivery
import YonaObservability
import YonaStore

/// One text or e-mail as it waits in the outbox (sealed, see `TextQueue`).
package enum OutgoingText: Codable, Sendable, Equatable {
    case sms(to: String, text: String, kind: String)
    case email(Email)

    package var channel: String {
        switch self {
        case .sms: "sms"
        case .email: "email"
        }
    }
}

/// Where texts and mails go out.
package struct TextTransports: Sendable {
    package let sms: any SMSTransport
    package let email: any EmailTransport
    /// Which channels' providers refuse our settings right now (logged once, not once per text).
    package let alarm = MisconfigurationAlarm()

    package init(sms: any SMSTransport, email: any EmailTransport) {
        self.sms = sms
        self.email = email
    }
}

/// The channels whose provider last said our settings are wrong.
package final class MisconfigurationAlarm: Sendable {
    private let raised = NIOLockedValueBox<Set<String>>([])

    package init() {}

    /// Marks `channel` misconfigured; true when it was not yet (the moment to say so).
    package func raise(_ channel: String) -> Bool { raised.withLockedValue { $0.insert(channel).inserted } }

    package func cleared(_ channel: String) { raised.withLockedValue { _ = $0.remove(channel) } }
}

/// The durable outbox of texts and e-mails (issue 13) on the delivery core (`Outbox`): a text is queued (sealed) on
/// the caller's database handle, so inside the transaction of the change that causes it when the caller has one;
/// the request then tries it at once (`sendNow`), and the `text-outbox` background job sends what is due again,
/// with backoff, until it is delivered, refused, or too old. Claims are leases, so two instances never send one
/// text twice; after a crash the lease lapses and it goes out once. Delivered rows are deleted: nothing of a text
/// outlives its sending.
package struct TextOutbox: Sendable {
    package struct Settings: Sendable {
        package var leaseSeconds: TimeInterval = 60
        package var backoffSeconds: TimeInterval = 5
        /// The longest wait between two attempts (a code texted late is of less use every minute).
        package var backoffCapSeconds: TimeInterval = 900
        /// A code texted hours late is of no use; after this a text is given up.
        package var maxAgeSeconds: TimeInterval = 6 * 3600
        /// Texts of one round at the provider at once.
        package var concurrency = 32

        package init(
            leaseSeconds: TimeInterval = 60, backoffSeconds: TimeInterval = 5, backoffCapSeconds: TimeInterval = 900,
            maxAgeSeconds: TimeInterval = 6 * 3600
        ) {
            self.leaseSeconds = leaseSeconds
            self.backoffSeconds = backoffSeconds
            self.backoffCapSeconds = backoffCapSeconds
            self.maxAgeSeconds = maxAgeSeconds
        }

        var backoff: Backoff { Backoff(base: backoffSeconds, cap: backoffCapSeconds) }
    }

    private(set) var db: any Database
    package let key: SymmetricKey
    package let transports: TextTransports
    package var settings = Settings()
    package let skipLocked: Bool
    /// Texts to one number per hour at sending time too (the request side limits them as well).
    package let perNumberPerHour: Int
    package let rateLimitKey: [UInt8]
    package let logger: Logger
    package var metrics: YonaMetrics? = nil

    /// The same outbox on another handle (a transaction's, to queue with the change that causes a text).
    package func on(_ db: any Database) -> TextOutbox {
        var copy = self
        copy.db = db
        return copy
    }

    /// Queues and tries at once; a delivery failure leaves it queued for the background job and fails nothing.
    package func send(_ text: OutgoingText, now: Date = Date()) async throws {
        let id = try await queue(text, now: now)
        await sendNow(id)
    }

    /// Queues a text; the background job sends it from `notBefore` on (now, unless it must wait).
    @discardableResult
    package func queue(_ text: OutgoingText, now: Date = Date(), notBefore: Date? = nil) async throws -> UUID {
        let id = UUID()
        let sealed = AEAD.seal(Array(try CompactJSONEncoder.data(text)), key: key, associatedData: Self.associatedData(id))
        // Its time to be delivered (and the maximum age) starts when it is due.
        try await TextQueue.queue(id: id, channel: text.channel, sealed: Data(sealed), due: notBefore ?? now, on: db)
        return id
    }

    /// Claims one queued text and delivers it; a failure stays in the outbox (and in the log, by type).
    package func sendNow(_ id: UUID, now: Date = Date()) async {
        do {
            let claimed = try await claim(now: now, limit: 1, only: id)
            for row in claimed { try await deliver(row, now: now) }
        } catch {
            logger.warning("text outbox: immediate delivery failed", metadata: ["error": .string(String(reflecting: type(of: error)))])
        }
    }

    /// One round of the background job: claims up to `limit` due texts and finishes each. Returns how many it claimed.
    @discardableResult
    package func drainOnce(now: Date = Date(), limit: Int = 256) async throws -> Int {
        let claimed = try await claim(now: now, limit: limit, only: nil)
        // Up to `concurrency` texts at the provider at once: each is one round trip there, and one after the other
        // the drain did ~400 a second however fast the provider answered (`scripts/bench texts`).
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = claimed.makeIterator()
            for _ in 0..<max(1, settings.concurrency) {
                guard let row = next.next() else { break }
                group.addTask { try await deliver(row, now: now) }
            }
            while try await group.next() != nil {
                if let row = next.next() { group.addTask { try await deliver(row, now: now) } }
            }
        }
        return claimed.count
    }

    private typealias Claimed = TextQueue.Claimed

    /// The table's lifecycle: any due text, soonest first.
    private var core: Outbox<UUID> { Self.lifecycle(on: db, skipLocked: skipLocked, settings: settings) }

    private static func lifecycle(on db: any Database, skipLocked: Bool, settings: Settings) -> Outbox<UUID> {
        TextQueue.lifecycle(
            on: db, skipLocked: skipLocked, leaseSeconds: settings.leaseSeconds, backoff: settings.backoff, maxAgeSeconds: settings.maxAgeSeconds)
    }

    private func claim(now: Date, limit: Int, only id: UUID?) async throws -> [Claimed] {
        try await core.claim(now: now, limit: limit, only: id, returning: TextQueue.claimedColumns).map {
            try $0.decode(model: Claimed.self)
        }
    }

    private func deliver(_ row: Claimed, now: Date) async throws {
        guard let plain = try? AEAD.open(Array(row.sealed), key: key, associatedData: Self.associatedData(row.id)),
            let text = try? CompactJSONDecoder.decode(OutgoingText.self, from: plain)
        else {
            // Sealed under another recovery key (a restore without the secret): it can never go out.
            return try await finish(row, outcome: .rejected("UNREADABLE"), channel: "unknown", now: now)
        }
        let outcome: DeliveryOutcome
        switch text {
        case .sms(let to, let body, let kind):
            let limit = RateLimiter.Limit(name: "texts-sent", max: perNumberPerHour, window: 3600)
            if try await RateLimiter(db: db, key: rateLimitKey).allows(limit, to) {
                outcome = await transports.sms.deliver(body, to: to, kind: kind)
            } else {
                logger.warning("sms: \(kind) dropped, too many texts to one number", metadata: ["sms_provider": "outbox"])
                outcome = .rejected("RATE_LIMITED")
            }
        case .email(let email):
            outcome = await transports.email.deliver(email)
        }
        try await finish(row, outcome: outcome, channel: text.channel, now: now)
    }

    /// Records the outcome (`Outbox.settle`); a text that will not go out keeps no content, only its channel and why.
    private func finish(_ row: Claimed, outcome: DeliveryOutcome, channel: String, now: Date) async throws {
        let settled = try await core.settle(
            row.id, attempts: row.attempts, createdAt: row.createdAt, outcome: outcome, now: now, clearing: TextQueue.clearingPayload)
        switch (settled, outcome) {
        case (.delivered, _):
            metrics?.text(channel: channel, outcome: "sent")
            transports.alarm.cleared(channel)
        case (.retrying, .misconfigured(let code)):
            // Nothing gets through until an operator fixes the settings: one error line until a delivery succeeds
            // again, and each text waits the longest backoff, not a hot loop against a provider that refuses us.
            metrics?.text(channel: channel, outcome: "misconfigured")
            if transports.alarm.raise(channel) {
                logger.error(
                    "\(channel) provider refuses our settings; nothing is delivered until they are fixed",
                    metadata: ["channel": .string(channel), "error_code": .string(code)])
            }
        case (.retrying, _):
            metrics?.text(channel: channel, outcome: "retry")
        case (.gaveUp, _):
            metrics?.text(channel: channel, outcome: "failed")
            logger.warning(
                "text outbox: given up after its maximum age", metadata: ["channel": .string(channel), "error_code": .string(outcome.code ?? "")])
        case (.refused, .deadAddress):
            metrics?.text(channel: channel, outcome: "dead_address")
        case (.refused, _):
            metrics?.text(channel: channel, outcome: "rejected")
        }
    }

    /// Forgets failed texts after a day (the housekeeping job).
    package static func purgeFailed(on db: any Database, now: Date = Date()) async throws {
        try await lifecycle(on: db, skipLocked: false, settings: Settings()).purgeFailed(before: now.addingTimeInterval(-86_400))
    }

    private static func associatedData(_ id: UUID) -> [UInt8] { Array("text_outbox.sealed".utf8) + [0] + id.bytes }

    package init(
        db: any Database, key: SymmetricKey, transports: TextTransports, settings: Settings = Settings(), skipLocked: Bool,
        perNumberPerHour: Int, rateLimitKey: [UInt8], logger: Logger, metrics: YonaMetrics? = nil
    ) {
        self.db = db
        self.key = key
        self.settings = settings
        self.transports = transports
        self.skipLocked = skipLocked
        self.perNumberPerHour = perNumberPerHour
        self.rateLimitKey = rateLimitKey
        self.logger = logger
        self.metrics = metrics
    }
}
