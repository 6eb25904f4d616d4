import ArgumentParser
import Foundation
import Metrics
import Prometheus
import ServiceLifecycle
import Vapor
import YonaAPI
import YonaConfig

/// `yona-server`: the executable's commands, parsed by swift-argument-parser before anything is configured, so
/// `--help` and a usage mistake have no side effects. `serve` is the default.
public struct YonaCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "yona-server",
        abstract: "The Yona server: the app API, the analyzer and admin APIs, and the push workers.",
        subcommands: [
            ServeCommand.self, WorkersCommand.self, MigrateCommand.self, PushTestCommand.self, VAPIDCommand.self, SMSTestCommand.self,
            EmailTestCommand.self,
            SimulateCommand.self, CategoriesCommand.self,
        ],
        defaultSubcommand: ServeCommand.self)

    public init() {}
}

/// What one run of the executable needs of the application.
public struct RunMode: Sendable {
    /// A long-running process (`serve`, `workers`): its metrics go through the process's `MetricsSystem`.
    public var backgroundWork: Bool
    /// Secrets left unset are made and kept in the data directory (`serve`, `workers`); a one-off command uses
    /// throwaway ones and writes none.
    public var keepsSecrets: Bool

    public static let server = RunMode(backgroundWork: true, keepsSecrets: true)
    public static let command = RunMode(backgroundWork: false, keepsSecrets: false)
}

/// Runs a command's work with a configured application and ends the process the way the operator's scripts
/// expect: one line on stderr, status 1 when the work failed (bad configuration included), 2 for a usage mistake.
enum YonaRuntime {
    /// Vapor reads `arguments` to pick its own command (only `serve` uses one).
    static func withApplication(
        _ mode: RunMode, arguments: [String] = ["yona-server"],
        adjust: (inout AppConfig) throws -> Void = { _ in },
        _ body: (Application) async throws -> Void
    ) async throws {
        // Level and format are read before .env is loaded too, so start-up chatter follows YONA_LOG_LEVEL.
        let environment = ProcessInfo.processInfo.environment
        let level = environment["YONA_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        let format = environment["YONA_LOG_FORMAT"].flatMap { AppConfig.LogFormat(rawValue: $0.lowercased()) } ?? .text
        LoggingSystem.bootstrap { label in QuietFrameworksLogHandler(label: label, level: level, format: format) }
        let app: Application
        do {
            app = try await Application.make(Environment(name: "production", arguments: arguments))
        } catch {
            fail("error: could not start: \(error)", status: 1)
        }
        do {
            // Application.make has read .env, so the environment is complete here.
            var config = try AppConfig.fromEnvironment(ProcessInfo.processInfo.environment)
            try adjust(&config)
            try await configure(app, config: config, mode: mode)
            try await body(app)
        } catch let error as AppConfig.Invalid {
            await stop(app, error.description, status: 1)
        } catch let error as CommandFailure {
            await stop(app, "error: \(error.message)", status: error.kind.rawValue)
        } catch {
            await stop(app, "error: stopped by \(String(reflecting: error))", status: 1)
        }
        await shutDown(app)
    }

    private static func stop(_ app: Application, _ line: String, status: Int32) async -> Never {
        await shutDown(app)
        fail(line, status: status)
    }

    /// The process ends either way; a shutdown that fails (a connection that would not close) is said, not hidden.
    private static func shutDown(_ app: Application) async {
        do { try await app.asyncShutdown() } catch {
            app.logger.warning("shutdown incomplete", metadata: ["error": .string(String(reflecting: error))])
        }
    }

    /// Runs a long-running command's services in one `ServiceGroup` until SIGTERM or SIGINT: the background jobs
    /// and, for `serve`, the HTTP listeners (last, so graceful shutdown closes them first and the jobs finish
    /// the round they are in). A job that is still busy after `gracePeriod` is cancelled; a push it had claimed
    /// is sent again once its lease lapses (push.md), so nothing is lost either way.
    static func runServices(_ app: Application, publicListener: Bool, gracePeriod: Duration = .seconds(25)) async throws {
        // Vapor's request metrics (and any other swift-metrics) land in the registry `/metrics` exposes.
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: app.yona.metrics.registry))
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = app.backgroundJobs.map {
            .init(service: $0, serviceName: $0.name)
        }
        // every process adds its own deliveries to the console's per-minute history (whatever else it runs)
        services.append(.init(service: app.deliveryHistoryJob, serviceName: "delivery-history"))
        if publicListener || app.yona.config.internalPort != nil {
            services.append(.init(service: HTTPListeners(app, publicListener: publicListener), serviceName: "http-listeners"))
        }
        guard !services.isEmpty else { throw CommandFailure.usage("nothing to run: the workers are off and there is no listener") }
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
        configuration.maximumGracefulShutdownDuration = gracePeriod
        if let warning = app.yona.config.startupWarning { app.logger.warning("\(warning)") }
        app.logger.info("running", metadata: ["services": .string(services.map(\.serviceName).joined(separator: ","))])
        try await ServiceGroup(configuration: configuration).run()
        app.logger.info("stopped")
    }

    static func fail(_ line: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(line)\n".utf8))
        exit(status)
    }
}

/// `yona-server serve`: migrations, then the HTTP server and (unless `--no-workers`) the push workers.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Applies migrations, then serves the API and runs the push workers (the default command)")

    @ArgumentParser.Flag(name: .customLong("no-workers"), help: "Serve without the push workers (run `workers` elsewhere)")
    var noWorkers = false
    @ArgumentParser.Flag(name: .customLong("workers-only"), help: "Run the push workers without the HTTP server (as `workers`)")
    var workersOnly = false
    @ArgumentParser.Option(name: .customLong("hostname"), help: "Listen address (overrides YONA_HOST)")
    var hostname: String?
    @ArgumentParser.Option(name: .customLong("port"), help: "Listen port (overrides YONA_PORT)")
    var port: Int?

    func run() async throws {
        if noWorkers && workersOnly { throw CommandFailure.usage("--no-workers and --workers-only exclude each other") }
        if workersOnly { return try await WorkersCommand().run() }
        try await YonaRuntime.withApplication(
            .server, arguments: ["yona-server", "serve"],
            adjust: { config in
                if noWorkers { config.push.workersEnabled = false }
                if let hostname { config.host = hostname }
                if let port {
                    guard (1...65535).contains(port) else { throw CommandFailure.usage("--port must be 1-65535") }
                    config.port = port
                }
            }
        ) { app in
            try await app.withMigrationLock { try await app.autoMigrate() }
            try await app.asyncBoot()
            try await YonaRuntime.runServices(app, publicListener: true)
        }
    }
}
