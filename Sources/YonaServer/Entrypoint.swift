import ArgumentParser
import Foundation
import YonaAPI

/// The executable's whole life: parse the command line (`serve` by default; `yona-server --help`), then run the
/// command, which reads the configuration and wires only what it needs. Exit status: 0 done, 1 failed (bad
/// configuration included), 2 usage mistake. Errors are one line on stderr.
public enum Entrypoint {
    public static func main() async {
        do {
            let command = try YonaCommand.parseAsRoot()
            if var async = command as? any AsyncParsableCommand {
                try await async.run()
            } else {
                var sync = command
                try sync.run()
            }
        } catch let error as CommandFailure {
            YonaRuntime.fail("error: \(error.message)", status: error.kind.rawValue)
        } catch {
            // Help prints and ends well; a usage mistake is one line and status 2; anything else status 1.
            switch YonaCommand.exitCode(for: error) {
            case .success: YonaCommand.exit(withError: error)
            case .validationFailure: YonaRuntime.fail("error: \(YonaCommand.message(for: error))", status: 2)
            default: YonaRuntime.fail("error: \(String(reflecting: error))", status: 1)
            }
        }
    }
}
