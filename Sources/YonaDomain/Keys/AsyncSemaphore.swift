import Foundation
import NIOConcurrencyHelpers

/// A counting semaphore for async code: waiters queue in order and resume as permits come back.
package final class AsyncSemaphore: Sendable {
    package let capacity: Int
    private struct State {
        package var available: Int
        package var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    package init(permits: Int) {
        precondition(permits > 0)
        capacity = permits
        state = NIOLockedValueBox(State(available: permits))
    }

    package func withPermit<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLockedValue { s -> Bool in
                if s.available > 0 {
                    s.available -= 1
                    return true
                }
                s.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.available += 1
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
