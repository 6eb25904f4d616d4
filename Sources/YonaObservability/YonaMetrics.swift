import Foundation
import Prometheus

/// The server's Prometheus metrics (operations.md "Observability", push.md "Metrics"). One registry per
/// application, so tests that run many applications in one process do not share counters.
package final class YonaMetrics: Sendable {
    package let registry = PrometheusCollectorRegistry()
    /// The same deliveries per minute, for the console's charts of the last hour.
    package let recent = MinuteTallies()

    private static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
    ]

    private func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "yona", metricName: metric, unitName: unit, helpText: help)
    }

    package func push(outcome: String, errorCode: String) {
        registry.makeCounter(
            descriptor: name("pushes", "total", "Push attempts by outcome and provider error code"),
            labels: [("outcome", outcome), ("error_code", errorCode)]
        ).increment()
        recent.add(errorCode.isEmpty ? "pushes \(outcome)" : "pushes \(outcome): \(errorCode)")
    }

    package func pushRetry() {
        registry.makeCounter(descriptor: name("push_retries", "total", "Pushes put back for a later attempt")).increment()
    }

    package func tokenCleared(reason: String) {
        registry.makeCounter(
            descriptor: name("push_tokens_cleared", "total", "Instance IDs cleared, by reason"),
            labels: [("reason", reason)]
        ).increment()
    }

    package func fcmRequest(duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: name("fcm_request_duration", "seconds", "FCM messages:send latency"),
            labels: [], buckets: Self.latencyBuckets
        ).record(duration)
    }

    /// The latency of one request to a direct push provider (`apns`, `webpush`).
    package func pushRequest(provider: String, duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: name("push_request_duration", "seconds", "Direct push provider request latency"),
            labels: [("provider", provider)], buckets: Self.latencyBuckets
        ).record(duration)
    }

    package func oauthRefresh() {
        registry.makeCounter(descriptor: name("fcm_oauth_refreshes", "total", "FCM access tokens obtained")).increment()
    }

    package func analyzerEvents(_ count: Int, conflicts: Int) {
        registry.makeCounter(descriptor: name("analyzer_events", "total", "Activity events recorded")).increment(by: Int64(count))
        recent.add("analyzer events", count)
        recent.add("goal conflict messages", conflicts)
        if conflicts > 0 {
            registry.makeCounter(descriptor: name("goal_conflict_messages", "total", "Goal-conflict messages raised (own and buddy copies)"))
                .increment(by: Int64(conflicts))
        }
    }

    /// One group-commit round of analyzer reports (events / rounds is the mean round size).
    package func analyzerRound(reports: Int) {
        registry.makeCounter(descriptor: name("analyzer_rounds", "total", "Transactions that recorded analyzer reports")).increment()
        registry.makeCounter(descriptor: name("analyzer_round_reports", "total", "Analyzer reports recorded in those rounds"))
            .increment(by: Int64(reports))
    }

    package func messageEnvelopesNotStored() {
        registry.makeCounter(
            descriptor: name("message_envelopes_not_stored", "total", "Inbox listings whose message envelopes could not be stored")
        )
        .increment()
    }

    package func text(channel: String, outcome: String) {
        registry.makeCounter(
            descriptor: name("texts", "total", "Texts and e-mails by channel and outcome (sent, retry, rejected, failed)"),
            labels: [("channel", channel), ("outcome", outcome)]
        ).increment()
        recent.add("\(channel == "email" ? "mail" : "texts") \(outcome)")
    }

    package func pushPutOff() {
        registry.makeCounter(
            descriptor: name("pushes_put_off", "total", "Pushes held back for a device's minimum interval (what comes meanwhile folds into them)")
        ).increment()
    }

    package func backgroundJobSucceeded(_ job: String) {
        registry.makeGauge(
            descriptor: name("background_job_last_success", "timestamp_seconds", "When a background job last finished a round"),
            labels: [("job", job)]
        ).set(to: Date().timeIntervalSince1970)
    }

    package func backgroundJobFailed(_ job: String) {
        registry.makeCounter(
            descriptor: name("background_job_failures", "total", "Background job rounds that failed (logged with their cause)"),
            labels: [("job", job)]
        ).increment()
    }

    package func keyDerivation(duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: name("kdf_duration", "seconds", "Argon2id key-derivation time"),
            labels: [],
            buckets: [
                .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                .milliseconds(500), .seconds(1), .seconds(2),
            ]
        ).record(duration)
    }

    /// Sets the outbox gauges to `depths`, read from the database at scrape time so every instance reports the
    /// shared truth.
    package func setOutboxGauges(_ depths: OutboxDepths, now: Date = Date()) {
        let pushes = depths.pushesByProvider.values
        registry.makeGauge(descriptor: name("push_outbox_depth", "", "Outbox rows not yet finished"))
            .set(to: Double(pushes.map(\.count).reduce(0, +)))
        let oldest = pushes.compactMap(\.oldest).min()
        registry.makeGauge(descriptor: name("push_oldest_pending", "seconds", "Age of the oldest unfinished outbox row"))
            .set(to: oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0)
        registry.makeGauge(descriptor: name("text_outbox_depth", "", "Texts and e-mails not yet sent"))
            .set(to: Double(depths.textsByChannel.values.map(\.count).reduce(0, +)))
        // A change that keeps failing holds up the ones behind it (they are applied in order): a depth that only grows
        // with failed attempts is the signal.
        registry.makeGauge(descriptor: name("vpn_account_outbox_depth", "", "VPN account changes not yet applied to the directory"))
            .set(to: Double(depths.vpnChanges.count))
        registry.makeGauge(descriptor: name("vpn_account_outbox_failing", "", "Waiting VPN account changes that failed at least once"))
            .set(to: Double(depths.vpnChanges.failing))
        registry.makeGauge(descriptor: name("announcement_recipients_pending", "", "Users a system announcement still has to reach"))
            .set(to: Double(depths.announcementRecipients))
    }

    package func exposition() -> String { registry.emitToString() }

    package init() {}
}

/// How deep every outbox is: what `/metrics` and the console's dashboard show (read by the domain's
/// `OutboxDepths.read(on:)`, which knows every queue).
package struct OutboxDepths: Sendable {
    /// Unfinished pushes per provider (`FCM`, `APNs`, `Web Push`, `none` for an address cleared meanwhile).
    package var pushesByProvider: [String: (count: Int, oldest: Date?)]
    /// Texts and mails not yet sent, per channel (`sms`, `email`).
    package var textsByChannel: [String: (count: Int, oldest: Date?)]
    /// VPN directory changes waiting, and how many of them failed at least once.
    package var vpnChanges: (count: Int, failing: Int)
    /// Users a system announcement still has to reach.
    package var announcementRecipients: Int

    package init(
        pushesByProvider: [String: (count: Int, oldest: Date?)], textsByChannel: [String: (count: Int, oldest: Date?)],
        vpnChanges: (count: Int, failing: Int), announcementRecipients: Int
    ) {
        self.pushesByProvider = pushesByProvider
        self.textsByChannel = textsByChannel
        self.vpnChanges = vpnChanges
        self.announcementRecipients = announcementRecipients
    }
}
