import Fluent
import Foundation
import NIOConcurrencyHelpers
import Vapor
import YonaConfig
import YonaDelivery
import YonaDomain
import YonaObservability
import YonaPush
import YonaStore

/// The long-lived collaborators of the domain, made once at start-up.
package struct YonaServices: Sendable {
    package let config: AppConfig
    /// Bearer token of the analyzer and admin APIs.
    package let internalToken: String
    /// Seals each user's anonymized id for lost-phone overwrites.
    package let recovery: RecoveryKey
    /// Where texts and mails leave the server (the outbox hands them over).
    package let texts: TextTransports
    /// On a test server, the mail transport that keeps the last mail for `/test/emails/last`; nil otherwise.
    package let lastEmail: RecordingEmailTransport?
    package let argon2: Argon2Pool
    /// Each kind of push address's provider (Firebase, APNs, Web Push).
    package let pushProvider: PushProviders
    package let metrics: YonaMetrics
    /// The OpenVPN profile, the SSL root certificate and the Apple configuration profile the apps download.
    package let vpnResources: VPNResources
    /// Analyzer reports recorded in group-commit rounds (`AnalysisService`).
    package let ingest: GroupCommit<ActivityReport, [Int64]>

    /// Where device changes queue their VPN accounts; nil without a directory.
    package var vpnAccounts: VPNAccountQueue? { config.vpnAccounts == nil ? nil : VPNAccountQueue(key: recovery.vpnOutboxKey) }

    package init(
        config: AppConfig, internalToken: String, recovery: RecoveryKey, texts: TextTransports, lastEmail: RecordingEmailTransport?,
        argon2: Argon2Pool,
        pushProvider: PushProviders, metrics: YonaMetrics, vpnResources: VPNResources, ingest: GroupCommit<ActivityReport, [Int64]>
    ) {
        self.config = config
        self.internalToken = internalToken
        self.recovery = recovery
        self.texts = texts
        self.lastEmail = lastEmail
        self.argon2 = argon2
        self.pushProvider = pushProvider
        self.metrics = metrics
        self.vpnResources = vpnResources
        self.ingest = ingest
    }
}

private struct YonaServicesKey: StorageKey {
    package typealias Value = YonaServices
}

/// Every configured application's services, beyond its storage: Vapor clears an application's storage when it shuts
/// down, and a request still in flight then (a client that gave up, a SIGTERM under load) must end with an error of its
/// own (its database is gone), not trap the process. An entry is replaced when an application is configured again.
private let configuredServices = NIOLockedValueBox<[ObjectIdentifier: YonaServices]>([:])

extension Application {
    package var yona: YonaServices {
        get {
            if let services = storage[YonaServicesKey.self] { return services }
            guard let kept = configuredServices.withLockedValue({ $0[ObjectIdentifier(self)] }) else {
                fatalError("configure(_:config:) was not called")
            }
            return kept
        }
        set {
            storage[YonaServicesKey.self] = newValue
            configuredServices.withLockedValue { $0[ObjectIdentifier(self)] = newValue }
        }
    }
}

extension Application {
    package var usesPostgres: Bool {
        if case .postgres = yona.config.database { return true }
        return false
    }

    /// SQLite: one writer at a time (`SerializedWritesDatabase`), so a second concurrent write round gains nothing.
    package var usesSerializedWrites: Bool { databases.configuration() is SerializedWritesConfiguration }

    package var announcementFanOut: AnnouncementFanOut {
        AnnouncementFanOut(db: db, skipLocked: usesPostgres, threadPool: threadPool)
    }

    /// The outbox of texts and mails on `db` (a transaction's handle, to queue with the change that causes them).
    package func textOutbox(on db: any Database) -> TextOutbox {
        var settings = TextOutbox.Settings()
        settings.leaseSeconds = yona.config.push.leaseSeconds // one lease setting for both outboxes
        return TextOutbox(
            db: db, key: yona.recovery.outboxKey, transports: yona.texts, settings: settings, skipLocked: usesPostgres,
            perNumberPerHour: yona.config.rateLimitPerNumberPerHour, rateLimitKey: yona.recovery.rateLimitKey, logger: logger,
            metrics: yona.metrics)
    }

    /// Texts in `locale`: the language of the request that causes them.
    package func sms(on db: any Database, locale: YonaLocale = .enUS) -> any SMSSender {
        QueuedSMSSender(outbox: textOutbox(on: db), locale: locale)
    }

    /// The directory side of the VPN account outbox; nil without a directory.
    package var vpnAccountOutbox: VPNAccountOutbox? {
        guard let directory = yona.config.vpnAccounts else { return nil }
        return VPNAccountOutbox(db: db, key: yona.recovery.vpnOutboxKey, directory: directory, threadPool: threadPool, logger: logger)
    }

    package var pushDispatcher: PushDispatcher {
        var settings = yona.config.push
        settings.recordDeliveries = yona.config.testServer
        return PushDispatcher(
            db: db, provider: yona.pushProvider, settings: settings,
            publicBaseURL: yona.config.pushBaseURL, skipLocked: usesPostgres, logger: logger, metrics: yona.metrics)
    }
}

extension Request {
    package var users: UserService {
        UserService(
            db: store, sms: application.sms(on: store, locale: context.locale), recovery: application.yona.recovery,
            testServer: application.yona.config.testServer,
            vpnAccounts: application.yona.vpnAccounts, signUp: application.yona.config.signUp)
    }

    package var devices: DeviceService { DeviceService(db: store, users: users) }

    package var photos: UserPhotoService { UserPhotoService(db: store, users: users) }

    /// Photo uploads count per client (a minute) and per account (a day): each one stores up to 128 KB for the
    /// retention period.
    package func limitPhotoUploads(from account: UUID) async throws {
        try await limitAttempts(
            number: nil,
            extra: [
                (
                    RateLimiter.Limit(name: "photo-uploads", max: application.yona.config.photoUploadsPerAccountPerDay, window: 86_400),
                    account.uuidString
                )
            ])
    }

    package var goals: GoalService { GoalService(db: store) }

    package var messages: MessageService { MessageService(db: store, metrics: application.yona.metrics) }

    package var announcements: AnnouncementService { AnnouncementService(db: store) }

    package var overwrites: OverwriteService { OverwriteService(db: store, users: users) }

    package var buddies: BuddyService { BuddyService(db: store, users: users) }

    package var invitations: InvitationService {
        InvitationService(
            db: store, users: users, argon2: application.yona.argon2, sms: application.sms(on: store, locale: context.locale),
            email: QueuedEmailSender(
                outbox: application.textOutbox(on: store), fromAddress: application.yona.config.emailFrom, locale: context.locale))
    }

    /// What a buddy request needs to invite a number without an account.
    package var inviting: BuddyService.Inviting {
        let links = rendering.links
        return BuddyService.Inviting(invitations: invitations) { links.invitation($0, temporaryPassword: $1) }
    }

    package var analysis: AnalysisService {
        AnalysisService(db: store, metrics: application.yona.metrics, ingest: application.yona.ingest)
    }

    package var newDeviceRequests: NewDeviceRequestService {
        NewDeviceRequestService(
            db: store, users: users, argon2: application.yona.argon2,
            lifetime: application.yona.config.newDeviceRequestLifetime)
    }

    /// Counts an attempt against the per-client limit and, when a number is involved, the per-number one.
    /// A buddy request texts or notifies a number: it counts per client, per invited number (shared with every other
    /// text to it) and per inviting account (a day).
    package func limitBuddyRequests(from account: UUID, to number: String) async throws {
        try await limitAttempts(
            number: number,
            extra: [
                (
                    RateLimiter.Limit(
                        name: "buddy-requests", max: application.yona.config.buddyRequestsPerAccountPerDay, window: 86_400), account.uuidString
                )
            ])
    }

    package func limitAttempts(number: String?, extra: [(RateLimiter.Limit, String)] = []) async throws {
        let config = application.yona.config
        var limits = [
            (
                RateLimiter.Limit(name: "client", max: config.rateLimitPerClientPerMinute, window: 60),
                ClientAddress.of(self, trustedProxies: config.trustedProxies)
            )
        ]
        if let number {
            limits.append((RateLimiter.Limit(name: "number", max: config.rateLimitPerNumberPerHour, window: 3600), number))
        }
        limits += extra
        try await RateLimiter(db: store, key: application.yona.recovery.rateLimitKey).hit(limits)
    }

    package var rendering: UserRendering {
        UserRendering(
            links: LinkBuilder(request: self, publicBaseURL: application.yona.config.publicBaseURL), locale: context.locale,
            vpnFiles: application.yona.vpnResources)
    }
}
