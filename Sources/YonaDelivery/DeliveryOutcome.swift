import Foundation

/// What became of one attempt to deliver a text or a mail, in the terms an outbox acts on.
package enum DeliveryOutcome: Sendable, Equatable {
    case delivered
    /// Worth trying again: the provider is down, overloaded or timed out; not before `after` seconds when it said so.
    case retry(String, after: TimeInterval? = nil)
    /// This message is refused for good (the provider will never take it as it is).
    case rejected(String)
    /// The address will never take anything: an invalid, unreachable or unsubscribed number or mailbox.
    case deadAddress(String)
    /// Our side is wrong (credentials, sender, account): no message gets through until an operator fixes it.
    case misconfigured(String)

    /// The short code kept with a message that did not go out (never an address or any content).
    package var code: String? {
        switch self {
        case .delivered: nil
        case .retry(let code, _), .rejected(let code), .deadAddress(let code), .misconfigured(let code): code
        }
    }
}

/// The one backoff rule of every channel: exponential from `base`, jittered, capped, and never sooner than the
/// provider's Retry-After (itself capped, so a provider cannot park a message for days).
package struct Backoff: Sendable {
    package var base: TimeInterval
    package var cap: TimeInterval
    package var retryAfterCap: TimeInterval = 3600

    package init(base: TimeInterval, cap: TimeInterval, retryAfterCap: TimeInterval = 3600) {
        self.base = base
        self.cap = cap
        self.retryAfterCap = retryAfterCap
    }

    /// The delay before attempt `attempts + 1`, given `attempts` made so far.
    package func delay(afterAttempts attempts: Int, retryAfter: TimeInterval? = nil, jitter: Double = Double.random(in: 0.5...1.5))
        -> TimeInterval
    {
        let exponential = min(cap, base * pow(2, Double(min(max(attempts, 0), 30))) * jitter)
        return max(exponential, min(retryAfter ?? 0, retryAfterCap))
    }

    /// A Retry-After header's seconds (RFC 9110: delay-seconds or an HTTP date).
    package static func retryAfter(_ header: String?, now: Date = Date()) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int(header) { return TimeInterval(max(seconds, 0)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: header).map { max($0.timeIntervalSince(now), 0) }
    }
}
