import Foundation
import Vapor
import YonaAPI
import YonaDomain

extension Application {
    /// The background jobs of `serve` and `workers`, each a `Service` (docs/architecture.md "Process model").
    /// None when the workers are switched off (`serve --no-workers`, `YONA_PUSH_WORKERS=false`): another
    /// process runs them then.
    var backgroundJobs: [BackgroundJob] {
        yona.config.push.workersEnabled ? allBackgroundJobs : []
    }

    /// Adds this process's deliveries per minute to `delivery_minutes` (the console's charts); every `serve` and
    /// `workers` process runs it, whether or not it runs the other jobs.
    var deliveryHistoryJob: BackgroundJob {
        let app = self
        return BackgroundJob(name: "delivery-history", idle: .seconds(60), logger: logger, metrics: yona.metrics) {
            try await app.yona.metrics.recent.flush(on: app.db)
            return false
        }
    }

    /// Every background job, whether or not this process runs them.
    var allBackgroundJobs: [BackgroundJob] {
        let app = self
        let dispatcher = pushDispatcher
        let fanOut = announcementFanOut
        let poll = Duration.milliseconds(Int64(yona.config.push.pollInterval * 1000))
        // A round's deadline: the push drain's round claims for 10 s, its sends end within the provider's timeout
        // (10 s), and in a database outage it keeps finishing what was delivered while the rows' lease lasts (0.8 of
        // it), so that a push the provider took is not sent again. Past that, a round is stuck.
        let deadline = Duration.seconds(yona.config.push.leaseSeconds * 0.8 + 30)
        func job(_ name: String, every idle: Duration, _ round: @escaping @Sendable () async throws -> Bool) -> BackgroundJob {
            var job = BackgroundJob(name: name, idle: idle, logger: app.logger, metrics: app.yona.metrics, round: round)
            job.deadline = deadline
            return job
        }
        // The purges run at start and then every interval; the two queues run whenever they find work.
        let newDeviceRequestPurge = Int64(min(600, max(1, yona.config.newDeviceRequestLifetime / 4)))
        var jobs = [
            // bounded, so that a round past its deadline is a stuck one (`BackgroundJob`)
            job("push-outbox", every: poll) { try await dispatcher.drain(claimingFor: .seconds(10)) > 0 },
            job("purge-finished-pushes", every: .seconds(3600)) {
                try await dispatcher.purgeFinished()
                return false
            },
            // Announcements become messages and pushes in batches of their own transaction, so a large broadcast
            // neither holds one giant transaction nor holds up the pushes already queued.
            job("announcement-fan-out", every: poll) { try await fanOut.runOnce() > 0 },
            // Texts and mails whose first try failed (a provider down, a process killed mid-send).
            job("text-outbox", every: .seconds(1)) { try await app.textOutbox(on: app.db).drainOnce() > 0 },
            job("purge-failed-texts", every: .seconds(3600)) {
                try await TextOutbox.purgeFailed(on: app.db)
                return false
            },
            // The inbox counts' changes, folded soon so a page's count reads few rows (docs/performance.md).
            job("fold-inbox-counts", every: .seconds(5)) { try await InboxCounts.fold(on: app.db) == InboxCounts.foldLimit },
            job("purge-expired-announcements", every: .seconds(60)) {
                try await AnnouncementService(db: app.db).purgeExpired()
                return false
            },
            job("purge-new-device-requests", every: .seconds(newDeviceRequestPurge)) {
                try await app.newDeviceRequestService.purgeExpired()
                return false
            },
            job("prune-stale-push-tokens", every: .seconds(3600)) {
                _ = try await dispatcher.pruneStaleTokens()
                return false
            },
            job("purge-retired-photos", every: .seconds(3600)) {
                try await UserPhotoService.purgeExpired(on: app.db)
                return false
            },
            job("purge-idempotency-keys", every: .seconds(3600)) {
                try await AnalysisService.purgeIdempotencyKeys(on: app.db)
                return false
            },
            job("purge-unclaimed-invitations", every: .seconds(3600)) {
                _ = try await InvitationService.purgeUnclaimed(on: app.db, recovery: app.yona.recovery)
                return false
            },
        ]
        // VPN accounts reach the directory in order; while it is down, the job backs off and the changes wait.
        if let outbox = vpnAccountOutbox {
            jobs.append(job("vpn-account-outbox", every: .seconds(1)) { try await outbox.drainOnce() > 0 })
        }
        return jobs
    }

    /// The new-device-request service outside a request (the purge needs no SMS and no test-server features).
    var newDeviceRequestService: NewDeviceRequestService {
        NewDeviceRequestService(
            db: db, users: UserService(db: db, sms: sms(on: db), recovery: yona.recovery, testServer: false),
            argon2: yona.argon2, lifetime: yona.config.newDeviceRequestLifetime)
    }
}
