import Foundation
import YonaAPI

/// How an operator command ends when it cannot do its job. The entry point prints `message` on stderr
/// (one line, never personal data) and exits with the kind's status: 2 for a usage mistake (wrong or
/// missing arguments, unreadable input), 1 when the work itself failed.
struct CommandFailure: Error, CustomStringConvertible {
    enum Kind: Int32 {
        case failed = 1
        case usage = 2
    }

    let kind: Kind
    let message: String
    var description: String { message }

    static func usage(_ message: String) -> CommandFailure { CommandFailure(kind: .usage, message: message) }
    static func failed(_ message: String) -> CommandFailure { CommandFailure(kind: .failed, message: message) }
}
