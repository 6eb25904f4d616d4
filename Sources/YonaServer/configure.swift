import AsyncHTTPClient
import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import NIOPosix
import Vapor
import YonaDomain
import YonaStore

/// Wires the application exactly as production runs it; the tests call this too. Nothing here starts running:
/// the listeners and the background jobs are services that `serve` and `workers` run (`Commands/`). A one-off
/// command (`mode`) writes no secret.
public func configure(_ app: Application, config: AppConfig, mode: RunMode = .server) async throws {
    app.logger.logLevel = Logger.Level(rawValue: config.logLevel) ?? .info
    app.http.server.configuration.hostname = config.host
    app.http.server.configuration.port = config.port
    app.routes.defaultMaxBodySize = ByteCount(integerLiteral: config.maxBodyBytes)

    switch config.database {
    case .sqlite(let path):
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        // The data directory holds the database and the generated secrets: this user's only.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        app.databases.use(.serializedSQLite(path: path), as: .sqlite)
    case .postgres(let url):
        // Analyzer events of one user wait on a row lock while holding a connection, so one connection per
        // event loop would stall every other request on that loop behind them.
        app.databases.use(
            .postgres(
                configuration: try SQLPostgresConfiguration(url: url), maxConnectionsPerEventLoop: 8,
                connectionPoolTimeout: .seconds(20)), as: .psql)
    }
    app.migrations.add(YonaMigrations.all)
    if case .sqlite = config.database { try await app.db.enableWriteAheadLog() }

    let dataDirectory: URL
    if case .sqlite(let path) = config.database {
        dataDirectory = URL(fileURLWithPath: path).deletingLastPathComponent()
    } else {
        dataDirectory = URL(fileURLWithPath: "./data")
    }
    let metrics = YonaMetrics()
    let emailTransport = LogEmailTransport(logger: app.logger, keepLast: config.testServer)
    // Argon2id gets threads of its own: on the application's pool (one thread per core) every SQLite query
    // and file read queued behind the hashing (`scripts/bench kdf`, docs/performance.md).
    let hashingThreads = NIOThreadPool(numberOfThreads: System.coreCount)
    hashingThreads.start()
    app.lifecycle.use(ThreadPoolStopper(pool: hashingThreads))
    app.yona = YonaServices(
        config: config,
        internalToken: try InternalToken.resolve(configured: config.internalToken, dataDirectory: dataDirectory, keep: mode.keepsSecrets),
        recovery: try RecoveryKey.resolve(configured: config.recoveryKey, dataDirectory: dataDirectory, keep: mode.keepsSecrets),
        texts: TextTransports(sms: makeSMSTransport(config.sms, logger: app.logger), email: emailTransport),
        emailTransport: emailTransport,
        argon2: Argon2Pool(limits: config.kdfLimits, threadPool: hashingThreads, metrics: metrics),
        pushProvider: try await makePushProvider(config, logger: app.logger, metrics: metrics, app: app),
        metrics: metrics,
        vpnResources: try VPNResources.load(config.vpn, logger: app.logger),
        ingest: GroupCommit(
            concurrency: app.usesSerializedWrites ? 1 : 2, observe: { metrics.analyzerRound(reports: $0) },
            round: { reports, db in try await AnalysisService.recordRound(reports, on: db) }))

    app.middleware = Middlewares()
    app.middleware.use(RequestContextMiddleware())
    app.middleware.use(AccessLogMiddleware())
    app.middleware.use(ErrorMappingMiddleware())
    app.middleware.use(HALContentNegotiation())
    app.middleware.use(ListenerGate())
    app.middleware.use(AppVersionHeaderMiddleware())

    routes(app)
}

/// Stops a thread pool the application started for itself when the application stops.
struct ThreadPoolStopper: LifecycleHandler {
    let pool: NIOThreadPool

    func shutdownAsync(_ app: Application) async {
        try? await pool.shutdownGracefully()
    }
}

/// The configured SMS provider.
func makeSMSTransport(_ settings: AppConfig.SMSSettings, logger: Logger) -> any SMSTransport {
    switch settings {
    case .log: LogSMSTransport(logger: logger)
    case .http(let url, let token, let from): HTTPSMSTransport(url: url, token: token, from: from, client: .shared, logger: logger)
    }
}

/// The configured push provider; a bad service account stops start-up with one line.
func makePushProvider(_ config: AppConfig, logger: Logger, metrics: YonaMetrics?, app: Application) async throws
    -> any PushProvider
{
    guard config.pushProvider == "fcm", let path = config.fcmServiceAccountPath else { return LogPushProvider(logger: logger) }
    let account = try FCMServiceAccount.load(path: path)
    let client = try FCMPushProvider.makeClient(concurrency: config.push.concurrency, trustRootsPEM: config.fcmTrustRootsPEM)
    app.lifecycle.use(HTTPClientStopper(client: client))
    let tokens: FCMAccessTokens
    do {
        tokens = try await FCMAccessTokens(account: account, client: client, metrics: metrics)
    } catch {
        throw AppConfig.Invalid(variable: "YONA_FCM_SERVICE_ACCOUNT", problem: "has a private key that is not a usable RSA PEM key")
    }
    return FCMPushProvider(
        endpoint: config.fcmEndpoint, projectID: account.projectID, tokens: tokens, client: client, metrics: metrics, logger: logger)
}

/// Shuts a client the application made for itself down when the application stops.
struct HTTPClientStopper: LifecycleHandler {
    let client: HTTPClient

    func shutdownAsync(_ app: Application) async {
        do { try await client.shutdown() } catch {
            app.logger.warning("HTTP client shutdown failed", metadata: ["error": .string(String(reflecting: error))])
        }
    }
}

/// The long-lived collaborators of the domain, made once at start-up.
struct YonaServices: Sendable {
    let config: AppConfig
    /// Bearer token of the analyzer and admin APIs.
    let internalToken: String
    /// Seals each user's anonymized id for lost-phone overwrites.
    let recovery: RecoveryKey
    /// Where texts and mails leave the server (the outbox hands them over).
    let texts: TextTransports
    /// The mail transport itself, for the test server's `/test/emails/last`.
    let emailTransport: LogEmailTransport
    let argon2: Argon2Pool
    let pushProvider: any PushProvider
    let metrics: YonaMetrics
    /// The OpenVPN profile, the SSL root certificate and the Apple configuration profile the apps download.
    let vpnResources: VPNResources
    /// Analyzer reports recorded in group-commit rounds (`AnalysisService`).
    let ingest: GroupCommit<ActivityReport, [Int64]>

    /// Where device changes queue their VPN accounts; nil without a directory.
    var vpnAccounts: VPNAccountQueue? { config.vpnAccounts == nil ? nil : VPNAccountQueue(key: recovery.vpnOutboxKey) }
}

private struct YonaServicesKey: StorageKey {
    typealias Value = YonaServices
}

extension Application {
    var yona: YonaServices {
        get {
            guard let services = storage[YonaServicesKey.self] else { fatalError("configure(_:config:) was not called") }
            return services
        }
        set { storage[YonaServicesKey.self] = newValue }
    }
}

extension Application {
    var usesPostgres: Bool {
        if case .postgres = yona.config.database { return true }
        return false
    }

    /// SQLite: one writer at a time (`SerializedWritesDatabase`), so a second concurrent write round gains nothing.
    var usesSerializedWrites: Bool { databases.configuration() is SerializedWritesConfiguration }

    var announcementFanOut: AnnouncementFanOut {
        AnnouncementFanOut(db: db, skipLocked: usesPostgres, threadPool: threadPool)
    }

    /// The outbox of texts and mails on `db` (a transaction's handle, to queue with the change that causes them).
    func textOutbox(on db: any Database) -> TextOutbox {
        var settings = TextOutbox.Settings()
        settings.leaseSeconds = yona.config.push.leaseSeconds // one lease setting for both outboxes
        return TextOutbox(
            db: db, key: yona.recovery.outboxKey, transports: yona.texts, settings: settings, skipLocked: usesPostgres,
            perNumberPerHour: yona.config.rateLimitPerNumberPerHour, rateLimitKey: yona.recovery.rateLimitKey, logger: logger,
            metrics: yona.metrics)
    }

    func sms(on db: any Database) -> any SMSSender { QueuedSMSSender(outbox: textOutbox(on: db)) }

    /// The directory side of the VPN account outbox; nil without a directory.
    var vpnAccountOutbox: VPNAccountOutbox? {
        guard let directory = yona.config.vpnAccounts else { return nil }
        return VPNAccountOutbox(db: db, key: yona.recovery.vpnOutboxKey, directory: directory, threadPool: threadPool, logger: logger)
    }

    var pushDispatcher: PushDispatcher {
        var settings = yona.config.push
        settings.recordDeliveries = yona.config.testServer
        return PushDispatcher(
            db: db, provider: yona.pushProvider, settings: settings,
            publicBaseURL: yona.config.pushBaseURL, skipLocked: usesPostgres, logger: logger, metrics: yona.metrics)
    }
}

extension Request {
    var users: UserService {
        UserService(
            db: db, sms: application.sms(on: db), recovery: application.yona.recovery, testServer: application.yona.config.testServer,
            vpnAccounts: application.yona.vpnAccounts)
    }

    var devices: DeviceService { DeviceService(db: db, users: users) }

    var photos: UserPhotoService { UserPhotoService(db: db, users: users) }

    /// Photo uploads count per client (a minute) and per account (a day): each one stores up to 128 KB for the
    /// retention period.
    func limitPhotoUploads(from account: UUID) async throws {
        try await limitAttempts(
            number: nil,
            extra: [
                (
                    RateLimiter.Limit(name: "photo-uploads", max: application.yona.config.photoUploadsPerAccountPerDay, window: 86_400),
                    account.uuidString
                )
            ])
    }

    var goals: GoalService { GoalService(db: db) }

    var messages: MessageService { MessageService(db: db) }

    var announcements: AnnouncementService { AnnouncementService(db: db) }

    var overwrites: OverwriteService { OverwriteService(db: db, users: users) }

    var buddies: BuddyService { BuddyService(db: db, users: users) }

    var invitations: InvitationService {
        InvitationService(
            db: db, users: users, argon2: application.yona.argon2, sms: application.sms(on: db),
            email: QueuedEmailSender(outbox: application.textOutbox(on: db)))
    }

    /// What a buddy request needs to invite a number without an account.
    var inviting: BuddyService.Inviting {
        let links = rendering.links
        return BuddyService.Inviting(invitations: invitations) { links.invitation($0, temporaryPassword: $1) }
    }

    var analysis: AnalysisService {
        AnalysisService(db: db, metrics: application.yona.metrics, ingest: application.yona.ingest)
    }

    var newDeviceRequests: NewDeviceRequestService {
        NewDeviceRequestService(
            db: db, users: users, argon2: application.yona.argon2,
            lifetime: application.yona.config.newDeviceRequestLifetime)
    }

    /// Counts an attempt against the per-client limit and, when a number is involved, the per-number one.
    /// A buddy request texts or notifies a number: it counts per client, per invited number (shared with every other
    /// text to it) and per inviting account (a day).
    func limitBuddyRequests(from account: UUID, to number: String) async throws {
        try await limitAttempts(
            number: number,
            extra: [
                (
                    RateLimiter.Limit(
                        name: "buddy-requests", max: application.yona.config.buddyRequestsPerAccountPerDay, window: 86_400), account.uuidString
                )
            ])
    }

    func limitAttempts(number: String?, extra: [(RateLimiter.Limit, String)] = []) async throws {
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
        try await RateLimiter(db: db, key: application.yona.recovery.rateLimitKey).hit(limits)
    }

    var rendering: UserRendering {
        UserRendering(
            links: LinkBuilder(request: self, publicBaseURL: application.yona.config.publicBaseURL), locale: context.locale,
            sslRootCertCN: application.yona.vpnResources.sslRootCertificateCommonName)
    }
}
