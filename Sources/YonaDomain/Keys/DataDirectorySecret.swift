import Foundation

/// A secret the operator may leave unset: made once, kept in a file of the data directory (mode 600) and read
/// from there on every later start (the internal token, the recovery key).
package enum DataDirectorySecret {
    /// The stored value if `file` holds one `isValid` accepts; otherwise `generate()`'s, written to `file` (only
    /// with `keep`: a one-off command gets a throwaway value and writes nothing). `created` tells the caller to
    /// announce it. An unwritable file is a configuration error of `variable`.
    package static func loadOrCreate(
        file name: String, in dataDirectory: URL, variable: String, keep: Bool = true, isValid: (String) -> Bool,
        generate: () -> String
    ) throws -> (value: String, file: URL, created: Bool) {
        let file = dataDirectory.appendingPathComponent(name)
        if let stored = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), isValid(stored) {
            return (stored, file, false)
        }
        guard keep else { return (generate(), file, false) }
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let value = generate()
        guard FileManager.default.createFile(atPath: file.path, contents: Data(value.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError(variable: variable, problem: "is not set and \(file.path) cannot be written")
        }
        return (value, file, true)
    }
}
