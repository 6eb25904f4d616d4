import Fluent
import Foundation
import Vapor

/// The executable's whole life: read the configuration, wire the app, run the command
/// (`serve` by default, also `migrate`). Bad configuration stops it with one line.
public enum Entrypoint {
    public static func main() async {
        var env: Environment
        do {
            env = try Environment.detect()
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(2)
        }
        // The level is read here too, before .env is loaded, so start-up chatter follows YONA_LOG_LEVEL.
        let level = ProcessInfo.processInfo.environment["YONA_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        let app: Application
        do {
            app = try await Application.make(env)
        } catch {
            FileHandle.standardError.write(Data("error: could not start: \(error)\n".utf8))
            exit(1)
        }
        do {
            // Application.make has read .env, so the environment is complete here.
            let config = try AppConfig.fromEnvironment(ProcessInfo.processInfo.environment)
            try await configure(app, config: config)
            let command = env.arguments.dropFirst().first ?? "serve"
            if command == "serve" || command.hasPrefix("-") {
                try await app.autoMigrate()
            }
            try await app.execute()
        } catch let error as AppConfig.Invalid {
            FileHandle.standardError.write(Data("\(error.description)\n".utf8))
            try? await app.asyncShutdown()
            exit(1)
        } catch {
            app.logger.critical("stopped", metadata: ["error_type": .string(String(reflecting: type(of: error)))])
            try? await app.asyncShutdown()
            exit(1)
        }
        try? await app.asyncShutdown()
    }
}
