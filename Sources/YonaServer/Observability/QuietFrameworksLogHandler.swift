import Foundation
import Logging
import NIOConcurrencyHelpers
import YonaConfig

/// The server's log handler. Below `info`, only the server's own code may log: at `debug` and `trace` Vapor
/// prints whole request heads (`Yona-Password`, one-time passwords, paths with numbers) and FluentKit prints
/// every query with its values (numbers, Instance IDs), which privacy.md forbids whatever the log level. The
/// filter is the same for both line formats.
struct QuietFrameworksLogHandler: LogHandler {
    private var inner: any LogHandler
    /// The logger's metadata (Vapor's request id, our correlation id), kept here and handed to the inner handler only
    /// with a line it writes: `StreamLogHandler` re-renders its metadata on every change, twice per request, which
    /// showed in the analyzer's CPU profile (2%) while most requests log nothing (docs/performance.md).
    private var ownMetadata: Logger.Metadata = [:]

    init(label: String, level: Logger.Level, format: AppConfig.LogFormat = .text) {
        switch format {
        case .text: inner = TextLineLogHandler(label: label)
        case .json: inner = JSONLineLogHandler(label: label)
        }
        inner.logLevel = level
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { ownMetadata }
        set { ownMetadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { ownMetadata[key] }
        set { ownMetadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .info || Self.isOwn(event.source) else { return }
        var event = event
        if !ownMetadata.isEmpty { event.metadata = ownMetadata.merging(event.metadata ?? [:]) { _, explicit in explicit } }
        inner.log(event: event)
    }

    /// A log event's source is the module that logged it: the server's own modules (Package.swift).
    static let ownModules: Set<String> = ["YonaServer", "YonaAPI", "YonaConfig", "YonaPush", "YonaDomain", "YonaStore", "YonaCrypto"]

    static func isOwn(_ source: String) -> Bool { ownModules.contains(source) }
}

/// The text format, line for line as swift-log's `StreamLogHandler` writes it (`2026-11-28T10:15:02+0000 info
/// codes.vapor.application: correlation_id=… duration_ms=0.1 [YonaAPI] GET /health 200`), written with one `write`
/// per line and the time stamp made once a second: `StreamLogHandler` formats the local time with `strftime` and
/// goes through stdio's lock and flush for every line, which was a tenth of `/health`'s CPU at the default level
/// (docs/performance.md, "The request pipeline").
struct TextLineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider? = nil

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let pretty = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let rest = " \(event.level)\(label.isEmpty ? "" : " ")\(label):\(pretty) [\(event.source)] \(event.message)\n"
        Self.output.write(rest)
    }

    private static let output = StandardOutputLines()
}

/// Standard output, a line per `write(2)` under one lock (lines of concurrent requests never interleave), each
/// prefixed with the local time to the second, formatted again only when the second changes.
private final class StandardOutputLines: Sendable {
    private struct Clock {
        var second = -1
        var stamp = ""
    }

    private let clock = NIOLockedValueBox(Clock())

    func write(_ rest: String) {
        clock.withLockedValue { clock in
            var now = time(nil)
            if now != clock.second {
                var local = tm()
                localtime_r(&now, &local)
                var buffer = [CChar](repeating: 0, count: 64)
                strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
                clock.second = now
                clock.stamp = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            var line = clock.stamp + rest
            line.withUTF8 { bytes in
                var written = 0
                while written < bytes.count {
                    let result = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + written, bytes.count - written)
                    if result > 0 {
                        written += result
                    } else if result < 0 && errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }
}

/// `YONA_LOG_FORMAT=json`: one JSON object per line on standard output, `{"time","level","label","message",…}`
/// with the metadata (the correlation id among it) as further string members, for log collectors that would
/// otherwise have to parse the text format.
struct JSONLineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider? = nil

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        let merged = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged { fields[key] = "\(value)" }
        fields["time"] = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        Self.output.write(line)
    }

    /// One write per line, so lines of concurrent requests never interleave.
    private static let output = LockedOutput()

    private final class LockedOutput: @unchecked Sendable {
        private let lock = NSLock()
        func write(_ data: Data) {
            lock.lock()
            defer { lock.unlock() }
            FileHandle.standardOutput.write(data)
        }
    }
}
