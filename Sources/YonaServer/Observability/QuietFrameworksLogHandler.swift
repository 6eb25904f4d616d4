import Logging

/// The server's log handler. Below `info`, only the server's own code may log: at `debug` and `trace` Vapor
/// prints whole request heads (`Yona-Password`, one-time passwords, paths with numbers) and FluentKit prints
/// every query with its values (numbers, Instance IDs), which privacy.md forbids whatever the log level.
struct QuietFrameworksLogHandler: LogHandler {
    private var inner: StreamLogHandler

    init(label: String, level: Logger.Level) {
        inner = StreamLogHandler.standardOutput(label: label)
        inner.logLevel = level
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .info || Self.isOwn(event.source) else { return }
        inner.log(event: event)
    }

    static func isOwn(_ source: String) -> Bool { source == "YonaServer" || source == "YonaCrypto" }
}
