import Foundation
import NIOCore
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

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

            // act: 30 visits 30 minutes apart, 15 renames, 10 new accounts and 15 message reads, all at once. What is
            // checked is that every one is served, not how fast: 70 requests with Argon2id in most of them queue on
            // two cores shared with the rest of the suite, so each may wait longer than the usual 30 s.
            let patience = TimeAmount.seconds(150)
            let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for visit in 0..<30 {
                    group.addTask {
                        let response = try await server.postNetworkActivity(
                            ua, categories: ["gambling"], url: "https://p.example/\(visit)",
                            at: start.addingTimeInterval(Double(visit) * 1800), timeout: patience)
                        return ("visit", response.status)
                    }
                }
                for rename in 0..<15 {
                    group.addTask {
                        let response = try await server.request(
                            .PUT, "\(bob.path)/devices/\(deviceID)", headers: bob.passwordHeader,
                            json: ["name": "Phone \(rename)", "firebaseInstanceId": "fiid-bob-\(rename)"], timeout: patience)
                        return ("rename", response.status)
                    }
                }
                for _ in 0..<10 {
                    group.addTask {
                        let response = try await server.request(
                            .POST, "/users/",
                            json: [
                                "firstName": "New", "lastName": "User", "nickname": "nu", "mobileNumber": randomMobileNumber(),
                                "deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
                            ], timeout: patience)
                        return ("create", response.status)
                    }
                }
                for read in 0..<15 {
                    group.addTask {
                        let reader = read % 2 == 0 ? richard : bob
                        let response = try await server.request(.GET, "\(reader.path)/messages/", headers: reader.passwordHeader, timeout: patience)
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

    /// The app fires several calls at once; each change waiting for the user (a buddy's device list, a buddy
    /// whose account was replaced) must reach the inbox once, not once per call.
    @Test(arguments: TestDatabase.available)
    func parallelCallsOfOneUserApplyEachPendingChangeOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard has buddies Bob and Carol; Bob renames his phone three times; Carol loses hers
            let richard = try await server.createUser()
            let bob = try await server.createUser(extra: BuddyTests.phone("fiid-bob"))
            let carol = try await server.createUser()
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            try await BuddyTests.connect(server, richard: richard, bob: carol)
            _ = try await server.messages(richard)
            let (deviceID, _) = try await DevicesTests.firstDevice(server, bob)
            for name in ["One", "Two", "Three"] {
                let renamed = try await server.request(.PUT, "\(bob.path)/devices/\(deviceID)", headers: bob.passwordHeader, json: ["name": name])
                try #require(renamed.status == 200, "\(renamed.text)")
            }
            try #require(try await OverwriteTests.requestCode(server, carol.mobileNumber).status == 204)
            try #require(try await OverwriteTests.overwrite(server, carol.mobileNumber).status == 201)

            // act: eight calls of Richard's at once
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for call in 0..<8 {
                    group.addTask {
                        let path = call % 2 == 0 ? "\(richard.path)/messages/" : richard.profilePath
                        return try await server.request(.GET, path, headers: richard.passwordHeader).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }

            // check
            #expect(statuses == Array(repeating: 200, count: 8))
            let types = try await server.messages(richard, query: "?size=100").compactMap { $0["@type"] as? String }
            #expect(types.filter { $0 == "BuddyDeviceChangeMessage" }.count == 3)
            #expect(types.filter { $0 == "BuddyDisconnectMessage" }.count == 1)
        }
    }

    /// A double tap sends an action twice at once. One wins; the other is answered as a repeat would be
    /// (`error.message.action.not.supported`), and nothing is done twice.
    @Test(arguments: TestDatabase.available)
    func anActionTappedTwiceAtOnceIsDoneOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard asks Bob to be his buddy
            let richard = try await server.createUser()
            let bob = try await server.createUser()
            let invited = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": ["firstName": "Bob", "lastName": "Dunn", "mobileNumber": bob.mobileNumber, "emailAddress": "buddy@example.com"]
                    ],
                    "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            try #require(invited.status == 201, "\(invited.text)")
            let request = try #require(try await server.messages(bob).first { $0["@type"] as? String == "BuddyConnectRequestMessage" })
            let accept = try #require(value(request, "_links", "yona:accept", "href") as? String)

            // act: Bob's accept arrives twice at once
            async let first = server.request(.POST, accept, headers: bob.passwordHeader, json: ["properties": [:] as [String: Any]])
            async let second = server.request(.POST, accept, headers: bob.passwordHeader, json: ["properties": [:] as [String: Any]])
            let answers = try await [first, second]

            // check: one acceptance, one buddy on each side, one answer for Richard
            #expect(answers.map(\.status).sorted() == [200, 400], "\(answers.map(\.text))")
            #expect(answers.contains { $0.errorCode == "error.message.action.not.supported" })
            let bobsBuddies = try await server.request(.GET, "\(bob.path)/buddies/", headers: bob.passwordHeader)
            #expect((value(bobsBuddies.json, "_embedded", "yona:buddies") as? [Any])?.count == 1)
            let richardsTypes = try await server.messages(richard).compactMap { $0["@type"] as? String }
            #expect(richardsTypes.filter { $0 == "BuddyConnectResponseMessage" }.count == 1)
            #expect(try await BuddyAnonymized.query(on: server.app.db).count() == 2)

            // and a disclosure request tapped twice reaches Bob once
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let login = try await server.vpnLogin(bob)
            try #require(
                try await server.postNetworkActivity(login.userAnonymizedID, categories: ["gambling"], url: "https://p.example").status == 204)
            let copy = try #require(try await server.messages(richard).first { $0["@type"] as? String == "GoalConflictMessage" })
            let disclose = try #require(value(copy, "_links", "yona:requestDisclosure", "href") as? String)
            async let ask1 = server.request(.POST, disclose, headers: richard.passwordHeader, json: ["properties": [:] as [String: Any]])
            async let ask2 = server.request(.POST, disclose, headers: richard.passwordHeader, json: ["properties": [:] as [String: Any]])
            let asks = try await [ask1, ask2]
            #expect(asks.map(\.status).sorted() == [200, 400], "\(asks.map(\.text))")
            let bobsTypes = try await server.messages(bob).compactMap { $0["@type"] as? String }
            #expect(bobsTypes.filter { $0 == "DisclosureRequestMessage" }.count == 1)
        }
    }

    /// New phones registered at the same moment each get a device index of their own (it used to be taken
    /// before the transaction, so two could pick the same one and the second failed with a 500).
    @Test(arguments: TestDatabase.available)
    func devicesRegisteredAtOnceGetIndexesOfTheirOwn(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser(extra: BuddyTests.phone("fiid-first"))
            let set = try await server.request(
                .PUT, NewDeviceRequestTests.requestPath(user.mobileNumber), headers: user.passwordHeader,
                json: ["newDeviceRequestPassword": "Add-four"])
            try #require(set.status == 204, "\(set.text)")

            // act: four registrations at once
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for tablet in 0..<4 {
                    group.addTask {
                        try await server.request(
                            .POST, "\(user.path)/devices/", headers: [("Yona-NewDeviceRequestPassword", "Add-four")],
                            json: [
                                "name": "Tablet \(tablet)", "operatingSystem": "ANDROID", "appVersion": "1.0", "appVersionCode": 1,
                            ]
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }

            // check
            #expect(statuses == [201, 201, 201, 201])
            let indexes = try await DeviceAnonymized.query(on: server.app.db).all(\.$deviceIndex)
            #expect(indexes.sorted() == [0, 1, 2, 3, 4])
        }
    }
}
