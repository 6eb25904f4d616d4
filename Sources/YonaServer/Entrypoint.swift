import ConsoleKit
import Fluent
import Foundation
import Vapor

/// The executable's whole life: read the configuration, wire the app, run the command (`serve` by default;
/// see `yona-server --help`). Exit status: 0 done, 1 failed (bad configuration included), 2 usage mistake.
/// Errors are one line on stderr.
public enum Entrypoint {
    public static func main() async {
        var env: Environment
        do {
            env = try Environment.detect()
        } catch {
            fail("error: \(error)", status: 2)
        }
        // `serve --no-workers` / `serve --workers-only` are ours; Vapor's serve must not see them.
        let noWorkers = env.arguments.contains("--no-workers")
        let workersOnly = env.arguments.contains("--workers-only")
        if noWorkers && workersOnly { fail("error: --no-workers and --workers-only exclude each other", status: 2) }
        env.arguments.removeAll { $0 == "--no-workers" || $0 == "--workers-only" }
        let command = env.arguments.dropFirst().first ?? "serve"
        if workersOnly {
            guard command == "serve" else { fail("error: --workers-only belongs to serve", status: 2) }
            env.arguments = [env.arguments.first ?? "yona-server", "workers"] + env.arguments.dropFirst(2)
        }
        // The level is read here too, before .env is loaded, so start-up chatter follows YONA_LOG_LEVEL.
        let level = ProcessInfo.processInfo.environment["YONA_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        LoggingSystem.bootstrap { label in QuietFrameworksLogHandler(label: label, level: level) }
        let app: Application
        do {
            app = try await Application.make(env)
        } catch {
            fail("error: could not start: \(error)", status: 1)
        }
        do {
            // Application.make has read .env, so the environment is complete here.
            var config = try AppConfig.fromEnvironment(ProcessInfo.processInfo.environment)
            if noWorkers { config.push.workersEnabled = false }
            try await configure(app, config: config)
            let wantsHelp = env.arguments.contains("--help") || env.arguments.contains("-h")
            if (command == "serve" || command.hasPrefix("-")) && !wantsHelp {
                try await app.autoMigrate()
            }
            try await app.startup()
            try await app.running?.onStop.get()
        } catch let error as AppConfig.Invalid {
            await stop(app, error.description, status: 1)
        } catch let error as CommandFailure {
            await stop(app, "error: \(error.message)", status: error.kind.rawValue)
        } catch let error as CommandError {
            await stop(app, "error: \(error.description) (see yona-server --help)", status: 2)
        } catch {
            await stop(app, "error: stopped by \(String(reflecting: type(of: error)))", status: 1)
        }
        try? await app.asyncShutdown()
    }

    private static func stop(_ app: Application, _ line: String, status: Int32) async -> Never {
        try? await app.asyncShutdown()
        fail(line, status: status)
    }

    private static func fail(_ line: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(line)\n".utf8))
        exit(status)
    }
}
