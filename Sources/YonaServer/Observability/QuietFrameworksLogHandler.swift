import Foundation
import Logging
import NIOConcurrencyHelpers
import YonaConfig
import YonaObservability

/// The server's log handler. Below `info`, only the server's own code may log: at `debug` and `trace` Vapor
/// prints whole request heads (`Yona-Password`, one-time passwords, paths with numbers) and FluentKit prints
/// every query with its values (numbers, Instance IDs), which privacy.md forbids whatever the log level. The
/// filter is the same for both line formats.
struct QuietFrameworksLogHandler: LogHandler {
    private var inner: LineLogHandler
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
        inner.log(event: event, beneath: ownMetadata)
    }

    /// A log event's source is the module that logged it: the server's own modules (Package.swift).
    static let ownModules: Set<String> = [
        "YonaServer", "YonaAPI", "YonaConfig", "YonaPush", "YonaDomain", "YonaDelivery", "YonaObservability", "YonaStore", "YonaCrypto",
    ]

    static func isOwn(_ source: String) -> Bool { ownModules.contains(source) }
}

/// Lines on standard output in one of two formats.
/// - `text`: line for line as swift-log's `StreamLogHandler` writes it (`2026-11-28T10:15:02+0000 info
///   codes.vapor.application: correlation_id=… duration_ms=0.1 [YonaAPI] GET /health 200`), but written in batches
///   (`StandardOutputLines`) with the time stamp made once a second: `StreamLogHandler` formats the local time with `strftime` and goes
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

    func log(event: LogEvent) { log(event: event, beneath: [:]) }

    /// Writes the event with `outer` (the logger's metadata `QuietFrameworksLogHandler` keeps) under the event's own
    /// metadata: a key the event names itself wins.
    func log(event: LogEvent, beneath outer: Logger.Metadata) {
        // urgent lines are written at once (with every line before them); the rest within `StandardOutputLines.interval`
        let urgent = event.level >= .warning
        switch format {
        case .text:
            var pairs = textMetadata(event, beneath: outer)
            pairs.sort { $0.key < $1.key }
            var rest = " \(event.level)"
            if !label.isEmpty { rest += " " + label }
            rest += ":"
            for (key, value) in pairs { rest += " \(key)=\(value)" }
            rest += " [\(event.source)] \(event.message)\n"
            Self.output.write(stamped: rest, urgent: urgent)
        case .json:
            var merged = metadata
            if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
            merged.merge(outer) { $1 }
            if let explicit = event.metadata { merged.merge(explicit) { $1 } }
            var fields: [String: String] = [:]
            for (key, value) in merged { fields[key] = "\(value)" }
            fields["time"] = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            fields["level"] = event.level.rawValue
            fields["label"] = label
            fields["message"] = "\(event.message)"
            guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return }
            line.append(0x0A)
            Self.output.write(Array(line), urgent: urgent)
        }
    }

    /// The line's metadata, each key once: the handler's own, then the provider's, `outer`, the event's and the
    /// error's, a later one winning. An array rather than merged dictionaries: an access line has three keys, and
    /// merging made and hashed a dictionary per step (a third of the line's cost in `/health`'s profile).
    private func textMetadata(_ event: LogEvent, beneath outer: Logger.Metadata) -> [(key: String, value: Logger.MetadataValue)] {
        var layers: [Logger.Metadata] = []
        if !metadata.isEmpty { layers.append(metadata) }
        if let provided = metadataProvider?.get(), !provided.isEmpty { layers.append(provided) }
        if !outer.isEmpty { layers.append(outer) }
        if let explicit = event.metadata, !explicit.isEmpty { layers.append(explicit) }
        if let error = event.error {
            layers.append(["error.message": "\(error)", "error.type": "\(String(reflecting: type(of: error)))"])
        }
        var pairs: [(key: String, value: Logger.MetadataValue)] = []
        pairs.reserveCapacity(layers.reduce(0) { $0 + $1.count })
        for (index, layer) in layers.enumerated() {
            let later = layers[(index + 1)...]
            for (key, value) in layer where !later.contains(where: { $0[key] != nil }) { pairs.append((key, value)) }
        }
        return pairs
    }

    private static let output = StandardOutputLines.shared
}

/// Standard output, written in batches by one thread: a line is appended to a buffer under a lock and a writer thread
/// writes what gathered every `interval` (nginx's `access_log … buffer= flush=`); a warning or an error (`urgent`)
/// writes the buffer and itself at once, a full buffer too, and the process writes what is left when it exits.
/// Lines never interleave (one `write(2)` at a time, under the lock) and keep their order. What a crash or a
/// SIGKILL can lose: the info lines of the last `interval`. A text line is prefixed with the local time to the
/// second, formatted again only when the second changes. Why: a `write(2)` per access line, under this lock, was
/// ~4% of `/health`'s samples and the lock's contention between the event loops more (docs/performance.md).
final class StandardOutputLines: Sendable {
    /// How long an info line may wait in the buffer, in seconds.
    static let interval = 0.02
    private static let batchBytes = 64 * 1024

    private struct State {
        var stamp = SecondStamp(format: "%Y-%m-%dT%H:%M:%S%z", utc: false)
        var pending: [UInt8] = []
        var writerStarted = false
    }

    private let state = NIOLockedValueBox(State())

    private init() {}

    func write(stamped rest: String, urgent: Bool) {
        let startWriter = state.withLockedValue { state in
            state.pending.append(contentsOf: state.stamp.current().utf8)
            state.pending.append(contentsOf: rest.utf8)
            return Self.settle(&state, urgent: urgent)
        }
        if startWriter { startWriterThread() }
    }

    func write(_ line: [UInt8], urgent: Bool) {
        let startWriter = state.withLockedValue { state in
            state.pending.append(contentsOf: line)
            return Self.settle(&state, urgent: urgent)
        }
        if startWriter { startWriterThread() }
    }

    /// Writes everything gathered so far.
    func flush() {
        state.withLockedValue { Self.writeAll(&$0.pending) }
    }

    /// After a line was appended: writes at once when it must, else leaves it to the writer (true: start it).
    private static func settle(_ state: inout State, urgent: Bool) -> Bool {
        if urgent || state.pending.count >= batchBytes { writeAll(&state.pending) }
        guard !state.writerStarted else { return false }
        state.writerStarted = true
        return true
    }

    private func startWriterThread() {
        // the process's last lines: written by the exit handler, whatever ends the process normally
        atexit { StandardOutputLines.shared.flush() }
        Thread.detachNewThread { [self] in
            while true {
                Thread.sleep(forTimeInterval: Self.interval)
                flush()
            }
        }
    }

    /// The process's standard output (`LineLogHandler` writes every line through it).
    static let shared = StandardOutputLines()

    private static func writeAll(_ pending: inout [UInt8]) {
        guard !pending.isEmpty else { return }
        pending.withUnsafeBufferPointer { bytes in
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
        pending.removeAll(keepingCapacity: pending.count <= batchBytes * 2)
    }
}
