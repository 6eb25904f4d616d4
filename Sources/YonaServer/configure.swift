import AsyncHTTPClient
import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import NIOPosix
import Vapor
import YonaAPI
import YonaConfig
import YonaDelivery
import YonaDomain
import YonaObservability
import YonaPush
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
        // (`livePostgres`: a statement on a connection that died fails instead of waiting forever, issue 36)
        app.databases.use(
            .livePostgres(
                configuration: try SQLPostgresConfiguration(url: url), maxConnectionsPerEventLoop: 8,
                connectionPoolTimeout: .seconds(20)), as: .psql)
    }
    app.migrations.add(YonaMigrations.all(production: !config.testServer))
    if case .sqlite = config.database { try await app.db.enableWriteAheadLog() }

    let dataDirectory: URL
    if case .sqlite(let path) = config.database {
        dataDirectory = URL(fileURLWithPath: path).deletingLastPathComponent()
    } else {
        dataDirectory = URL(fileURLWithPath: "./data")
    }
    let metrics = YonaMetrics()
    let emailTransport = makeEmailTransport(config.email, logger: app.logger)
    let lastEmail = config.testServer ? RecordingEmailTransport(emailTransport) : nil
    // Argon2id gets threads of its own: on the application's pool (one thread per core) every SQLite query
    // and file read queued behind the hashing (`scripts/bench kdf`, docs/performance.md).
    let hashingThreads = NIOThreadPool(numberOfThreads: System.coreCount)
    hashingThreads.start()
    app.lifecycle.use(ThreadPoolStopper(pool: hashingThreads))
    app.yona = YonaServices(
        config: config,
        internalToken: try InternalToken.resolve(configured: config.internalToken, dataDirectory: dataDirectory, keep: mode.keepsSecrets),
        recovery: try RecoveryKey.resolve(configured: config.recoveryKey, dataDirectory: dataDirectory, keep: mode.keepsSecrets),
        texts: TextTransports(sms: makeSMSTransport(config.sms, logger: app.logger, app: app), email: lastEmail ?? emailTransport),
        lastEmail: lastEmail,
        argon2: Argon2Pool(limits: config.kdfLimits, threadPool: hashingThreads, metrics: metrics),
        pushProvider: try await makePushProviders(
            config, dataDirectory: dataDirectory, keep: mode.keepsSecrets, logger: app.logger, metrics: metrics, app: app),
        metrics: metrics,
        vpnResources: try VPNResources.load(config.vpn, logger: app.logger),
        ingest: GroupCommit(
            concurrency: app.usesSerializedWrites ? 1 : 2, observe: { metrics.analyzerRound(reports: $0) },
            round: { reports, db in try await AnalysisService.recordRound(reports, on: db) }))

    app.middleware = Middlewares()
    app.middleware.use(RequestPipeline())
    // RequestPipeline records the same request metrics with handles made once per label set (AccessLog).
    app.http.server.configuration.reportMetrics = false

    routes(app)
}

/// Stops a thread pool the application started for itself when the application stops.
struct ThreadPoolStopper: LifecycleHandler {
    let pool: NIOThreadPool

    func shutdownAsync(_ app: Application) async {
        try? await pool.shutdownGracefully()
    }
}

/// The configured SMS provider, with an HTTP client of its own (`ProviderHTTP.makeClient`) stopped with the app.
func makeSMSTransport(_ settings: AppConfig.SMSSettings, logger: Logger, app: Application) -> any SMSTransport {
    func client() -> HTTPClient {
        let client = ProviderHTTP.makeClient()
        app.lifecycle.use(HTTPClientStopper(client: client))
        return client
    }
    return switch settings {
    case .log: LogSMSTransport(logger: logger)
    case .http(let url, let token, let from): HTTPSMSTransport(url: url, token: token, from: from, client: client(), logger: logger)
    case .plivo(let authID, let authToken, let from, let api):
        PlivoSMSTransport(authID: authID, authToken: authToken, from: from, api: api, client: client(), logger: logger)
    case .twilio(let accountSID, let authToken, let from, let api):
        TwilioSMSTransport(accountSID: accountSID, authToken: authToken, from: from, api: api, client: client(), logger: logger)
    }
}

/// The configured mail provider.
func makeEmailTransport(_ settings: AppConfig.EmailSettings, logger: Logger) -> any EmailTransport {
    switch settings {
    case .log: LogEmailTransport(logger: logger)
    case .smtp(let smtp): SMTPEmailTransport(settings: smtp, logger: logger)
    }
}

/// Each kind of push address's provider: Firebase (or the log), APNs (or the log without a key), Web Push.
func makePushProviders(
    _ config: AppConfig, dataDirectory: URL, keep: Bool, logger: Logger, metrics: YonaMetrics?, app: Application
) async throws -> PushProviders {
    let log = LogPushProvider(logger: logger)
    func client(trusting roots: String?) throws -> HTTPClient {
        let client = try PushHTTPClient.make(concurrency: config.push.concurrency, trustRootsPEM: roots)
        app.lifecycle.use(HTTPClientStopper(client: client))
        return client
    }
    var apns: any PushProvider = log
    if let settings = config.apns {
        let tokens: APNsProviderToken
        do {
            tokens = try await APNsProviderToken(keyPEM: settings.keyPEM, keyID: settings.keyID, teamID: settings.teamID)
        } catch {
            throw AppConfig.Invalid(variable: "YONA_APNS_KEY_FILE", problem: "is not a .p8 (PEM P-256) key")
        }
        apns = APNsPushProvider(
            settings: settings, tokens: tokens, client: try client(trusting: settings.trustRootsPEM), metrics: metrics, logger: logger)
    }
    let vapid = try await VAPID(
        pem: try VAPID.resolvePEM(configured: config.vapidPrivateKey, dataDirectory: dataDirectory, keep: keep),
        subject: config.effectiveVAPIDSubject)
    let webPush = WebPushPushProvider(
        vapid: vapid, client: try client(trusting: nil), endpoints: EndpointCheck(allowPrivate: config.webPushAllowPrivateEndpoints),
        metrics: metrics, logger: logger)
    return PushProviders(
        firebase: try await makeFirebaseProvider(config, logger: logger, metrics: metrics, client: client) ?? log, apns: apns, webPush: webPush)
}

/// The Firebase provider when a service account is configured; a bad one stops start-up with one line.
func makeFirebaseProvider(
    _ config: AppConfig, logger: Logger, metrics: YonaMetrics?, client makeClient: (String?) throws -> HTTPClient
) async throws -> FCMPushProvider? {
    guard config.pushProvider == "fcm", let path = config.fcmServiceAccountPath else { return nil }
    let account = try FCMServiceAccount.load(path: path)
    let client = try makeClient(config.fcmTrustRootsPEM)
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
