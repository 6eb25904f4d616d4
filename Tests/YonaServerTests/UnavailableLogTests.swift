import Foundation
import Testing

@testable import YonaAPI

/// operations.md "Overload": during an outage the 503s are logged once per interval, each line counting the
/// unlogged ones before it.
@Suite struct UnavailableLogTests {
    @Test func oneLinePerIntervalCountingTheRest() {
        let log = UnavailableLog(interval: 10)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(log.note(now: start) == 0, "the first 503 of an outage is logged")
        for second in 1...9 { #expect(log.note(now: start.addingTimeInterval(Double(second))) == nil) }
        #expect(log.note(now: start.addingTimeInterval(9.99)) == nil)
        #expect(log.note(now: start.addingTimeInterval(10)) == 10, "the next line says ten went unlogged")
        #expect(log.note(now: start.addingTimeInterval(100)) == 0, "a later outage starts afresh")
    }

    /// Many request threads at once: every 503 is either logged or counted, never both or neither.
    @Test func parallelNotesAreEachLoggedOrCountedOnce() async {
        let log = UnavailableLog(interval: 3600)
        let logged = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<1000 { group.addTask { log.note() } }
            var lines: [Int] = []
            for await line in group { if let line { lines.append(line) } }
            return lines
        }
        #expect(logged == [0], "one line for the whole burst")
        #expect(log.note(now: Date().addingTimeInterval(3600)) == 999)
    }
}
