import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Vapor

/// Wires the application exactly as production runs it; the tests call this too.
public func configure(_ app: Application, config: AppConfig) async throws {
    app.logger.logLevel = Logger.Level(rawValue: config.logLevel) ?? .info
    app.http.server.configuration.hostname = config.host
    app.http.server.configuration.port = config.port
    app.routes.defaultMaxBodySize = ByteCount(integerLiteral: config.maxBodyBytes)

    switch config.database {
    case .sqlite(let path):
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        app.databases.use(.sqlite(.file(path)), as: .sqlite)
    case .postgres(let url):
        app.databases.use(.postgres(configuration: try SQLPostgresConfiguration(url: url)), as: .psql)
    }
    app.migrations.add(YonaMigrations.all)

    app.yona = YonaServices(
        config: config,
        sms: LogSMSSender(logger: app.logger),
        argon2: Argon2Pool(limits: config.kdfLimits, threadPool: app.threadPool))

    app.middleware = Middlewares()
    app.middleware.use(RequestContextMiddleware())
    app.middleware.use(AccessLogMiddleware())
    app.middleware.use(ErrorMappingMiddleware())
    app.middleware.use(AppVersionHeaderMiddleware())

    routes(app)
}

/// The long-lived collaborators of the domain, made once at start-up.
struct YonaServices: Sendable {
    let config: AppConfig
    let sms: any SMSSender
    let argon2: Argon2Pool
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

extension Request {
    var users: UserService {
        UserService(db: db, sms: application.yona.sms, testServer: application.yona.config.testServer)
    }

    var rendering: UserRendering {
        UserRendering(links: LinkBuilder(request: self, publicBaseURL: application.yona.config.publicBaseURL))
    }
}
