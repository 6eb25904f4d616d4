import Foundation

@testable import YonaAPI

/// A process the tests start: the `yona-server` executable, psql, openssl, python. Spawned with posix_spawn, not
/// Foundation's `Process`: `Process.run` crashed the whole test process in memcpy now and then while parallel tests
/// spawned (even one spawn at a time under a lock), and it keeps pipes open that a daemonizing child inherits.
/// Every descriptor but 0-2 is marked close-on-exec before the spawn, so a child keeps none of the tests' sockets.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let lock = NSLock()
    private var reaped: Int32?

    /// Starts `path` (looked up in `PATH` when it has no slash). `environment` is added to the test process's own;
    /// stdin reads `input`, stdout and stderr both write `output` (created or truncated).
    init(
        _ path: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
        input: String = "/dev/null", output: String = "/dev/null", errors: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // The test process's threads block signals (SIGTERM among them); a child inherits that mask, so give it a
        // clean one with the default actions, or it cannot be stopped.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        // In another directory through env(1): Swift's Glibc module does not import posix_spawn_file_actions_addchdir_np.
        let command = directory.map { ["/usr/bin/env", "--chdir=\($0)", path] + arguments } ?? [path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = Self.spawnLock.withLock {
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap({ Int32($0) }) where fd > 2 {
                let flags = fcntl(fd, F_GETFD)
                if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            }
            return posix_spawnp(&pid, command[0], &actions, &attributes, argv, envp)
        }
        guard spawned == 0 else { throw TestSetupError(description: "\(path) did not start: \(String(cString: strerror(spawned)))") }
        self.pid = pid
    }

    /// One spawn at a time: marking descriptors close-on-exec and spawning must not interleave with another
    /// test's spawn, or a child could inherit a descriptor opened in between.
    private static let spawnLock = NSLock()

    /// The `yona-server` that `swift build --build-tests` put next to the test bundle.
    static func server(_ arguments: [String], environment: [String: String], directory: String? = nil, output: String = "/dev/null")
        throws -> ChildProcess
    {
        try ChildProcess(try serverExecutable(), arguments, environment: environment, directory: directory, output: output)
    }

    /// The path of the `yona-server` that `swift build --build-tests` put next to the test bundle.
    static func serverExecutable() throws -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("yona-server").path }
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestSetupError(description: "yona-server executable not found next to the test bundle")
        }
        return executable
    }

    /// Whether the child still runs (reaps it when it has ended).
    var isRunning: Bool { reap(blocking: false) == nil }

    /// Sends a signal; nothing happens once the child has been reaped.
    func signal(_ number: Int32) {
        lock.withLock { if reaped == nil { _ = kill(pid, number) } }
    }

    /// Blocks until the child ends (call it off the cooperative pool: `ExternalTool.detached`); returns its exit
    /// code, or 128 + the signal that ended it, as a shell reports it.
    @discardableResult func wait() -> Int32 { reap(blocking: true) ?? -1 }

    /// Waits up to `seconds` for the child to end; its exit code, or nil while it still runs.
    func exitCode(within seconds: Double) async throws -> Int32? {
        for _ in 0..<Int(seconds * 10) where isRunning { try await Task.sleep(for: .milliseconds(100)) }
        return reap(blocking: false)
    }

    /// Kills the child with SIGKILL if it still runs and reaps it.
    func kill9() {
        signal(SIGKILL)
        wait()
    }

    private func reap(blocking: Bool) -> Int32? {
        lock.withLock {
            if let reaped { return reaped }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, blocking ? 0 : WNOHANG) } while result == -1 && errno == EINTR
            guard result == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import
            let signal = status & 0x7f
            reaped = signal == 0 ? (status >> 8) & 0xff : 128 + signal
            return reaped
        }
    }
}
