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

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        guard level >= .info || Self.isOwn(source) else { return }
        inner.log(level: level, message: message, metadata: metadata, source: source, file: file, function: function, line: line)
    }

    static func isOwn(_ source: String) -> Bool { source == "YonaServer" || source == "YonaCrypto" }
}
