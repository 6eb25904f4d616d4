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
        inner = LineLogHandler(label: label, format: format)
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
    static let ownModules: Set<String> = [
        "YonaServer", "YonaAPI", "YonaConfig", "YonaPush", "YonaDomain", "YonaDelivery", "YonaObservability", "YonaStore", "YonaCrypto",
    ]

    static func isOwn(_ source: String) -> Bool { ownModules.contains(source) }
}

/// Lines on standard output in one of two formats.
/// - `text`: line for line as swift-log's `StreamLogHandler` writes it (`2026-11-28T10:15:02+0000 info
///   codes.vapor.application: correlation_id=… duration_ms=0.1 [YonaAPI] GET /health 200`), but with one `write` per
///   line and the time stamp made once a second: `StreamLogHandler` formats the local time with `strftime` and goes
///   through stdio's lock and flush for every line, a tenth of `/health`'s CPU at the default level
///   (docs/performance.md, "The request pipeline").
/// - `json` (`YONA_LOG_FORMAT=json`): one object per line, `{"time","level","label","message",…}` with the metadata
///   (the correlation id among it) as further string members, for log collectors that would otherwise have to parse
///   the text format.
struct LineLogHandler: LogHandler {
    let label: String
    let format: AppConfig.LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider? = nil

    init(label: String, format: AppConfig.LogFormat) {
        self.label = label
        self.format = format
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        switch format {
        case .text:
            if let error = event.error {
                merged["error.message"] = "\(error)"
                merged["error.type"] = "\(String(reflecting: type(of: error)))"
            }
            let pretty = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
            Self.output.write(stamped: " \(event.level)\(label.isEmpty ? "" : " ")\(label):\(pretty) [\(event.source)] \(event.message)\n")
        case .json:
            var fields: [String: String] = [:]
            for (key, value) in merged { fields[key] = "\(value)" }
            fields["time"] = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            fields["level"] = event.level.rawValue
            fields["label"] = label
            fields["message"] = "\(event.message)"
            guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return }
            line.append(0x0A)
            Self.output.write(Array(line))
        }
    }

    private static let output = StandardOutputLines()
}

/// Standard output, a line per `write(2)` under one lock, so lines of concurrent requests never interleave; a text
/// line is prefixed with the local time to the second, formatted again only when the second changes.
private final class StandardOutputLines: Sendable {
    private struct State {
        var second = -1
        var stamp = ""
    }

    private let state = NIOLockedValueBox(State())

    func write(stamped rest: String) {
        state.withLockedValue { state in
            var now = time(nil)
            if now != state.second {
                var local = tm()
                localtime_r(&now, &local)
                var buffer = [CChar](repeating: 0, count: 64)
                strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
                state.second = now
                state.stamp = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            var line = state.stamp + rest
            line.withUTF8 { Self.writeAll($0) }
        }
    }

    func write(_ line: [UInt8]) {
        state.withLockedValue { _ in line.withUnsafeBufferPointer { Self.writeAll($0) } }
    }

    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let result = Foundation.write(STDOUT_FILENO, base + written, bytes.count - written)
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
