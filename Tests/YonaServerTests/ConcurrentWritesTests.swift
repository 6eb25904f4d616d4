import Foundation
import Testing
@testable import YonaServer

/// Writers of every kind at once on one store: the classifier's events, the app renaming its device, new
/// accounts, message reads that move the named inbox, and the push workers. None of them may be refused
/// (on SQLite a transaction that had read and then wanted to write used to answer 503).
@Suite struct ConcurrentWritesTests {
    @Test(arguments: TestDatabase.available)
    func mixedWritersAtOnceAreAllServed(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.push.workersEnabled = true }) { server in
            // setup: Bob has a danger zone and Richard as buddy, so every visit writes three messages and pushes
            let richard = try await server.createUser(extra: BuddyTests.phone("fiid-richard"))
            let bob = try await server.createUser(extra: BuddyTests.phone("fiid-bob"))
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling, since: Date().addingTimeInterval(-3 * 86_400))
            let (ua, _) = try await server.vpnLogin(bob)
            let (deviceID, _) = try await DevicesTests.firstDevice(server, bob)
            let start = Date().addingTimeInterval(-2 * 86_400)

            // act: 30 visits 30 minutes apart, 15 renames, 10 new accounts and 15 message reads, all at once
            let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for visit in 0..<30 {
                    group.addTask {
                        let response = try await server.postNetworkActivity(ua, categories: ["gambling"], url: "https://p.example/\(visit)",
                                                                            at: start.addingTimeInterval(Double(visit) * 1800))
                        return ("visit", response.status)
                    }
                }
                for rename in 0..<15 {
                    group.addTask {
                        let response = try await server.request(.PUT, "\(bob.path)/devices/\(deviceID)", headers: bob.passwordHeader,
                                                                json: ["name": "Phone \(rename)", "firebaseInstanceId": "fiid-bob-\(rename)"])
                        return ("rename", response.status)
                    }
                }
                for _ in 0..<10 {
                    group.addTask {
                        let response = try await server.request(.POST, "/users/", json: [
                            "firstName": "New", "lastName": "User", "nickname": "nu", "mobileNumber": randomMobileNumber(),
                            "deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1])
                        return ("create", response.status)
                    }
                }
                for read in 0..<15 {
                    group.addTask {
                        let reader = read % 2 == 0 ? richard : bob
                        let response = try await server.request(.GET, "\(reader.path)/messages/", headers: reader.passwordHeader)
                        return ("read", response.status)
                    }
                }
                return try await group.reduce(into: [(String, Int)]()) { $0.append($1) }
            }

            // check: every call served, and every visit raised exactly its message and its buddy's copy
            let refused = statuses.filter { !(200..<300).contains($0.1) }
            #expect(statuses.count == 70)
            #expect(refused.isEmpty, "refused: \(refused)")
            let own = try await server.messages(bob, query: "?size=100").filter { $0["@type"] as? String == "GoalConflictMessage" }
            let copies = try await server.messages(richard, query: "?size=100").filter { $0["@type"] as? String == "GoalConflictMessage" }
            #expect(own.count == 30)
            #expect(copies.count == 30)
        }
    }

    /// Inside a transaction, a write through the outer handle would wait for that very transaction on SQLite;
    /// it fails at once instead, and the lock is free afterwards.
    @Test func aWriteBesideTheOpenTransactionFailsInsteadOfWaitingForItself() async throws {
        try await withServer(.sqlite) { server in
            let db = server.app.db
            let mode = try await db.sql.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self)
            #expect(mode == "wal")
            await #expect(throws: WriterLock.HeldByThisTask.self) {
                try await db.transaction { _ in
                    try await db.sql.raw("DELETE FROM named_messages").run()
                }
            }
            let count = try await db.transaction { tx in
                try await tx.sql.raw("DELETE FROM named_messages").run()
                return try await NamedMessage.query(on: tx).count()
            }
            #expect(count == 0)
        }
    }
}
