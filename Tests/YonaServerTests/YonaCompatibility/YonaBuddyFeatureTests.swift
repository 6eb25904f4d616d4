import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// Yona's buddy and message features (`BasicBuddyTest`, `MessagingTest`, `DisclosureTest`, `UpdateBuddyUserInfoTest`,
/// `RemoveUserTest`, `DeviceManagementTest`, `EditGoalsTest`), walked with the links the apps hold, on SQLite and
/// PostgreSQL. Each test names the Groovy features it follows.
@Suite struct YonaBuddyFeatureTests {
    static func linkSet(_ json: [String: Any]?) -> Set<String> { Set((json?["_links"] as? [String: Any] ?? [:]).keys) }

    static func messages(_ server: TestServer, _ user: TestUser, type: String) async throws -> [[String: Any]] {
        try await server.messages(user).filter { $0["@type"] as? String == type }
    }

    /// Follows a message's action link (`yona:accept`, `yona:reject`, `yona:requestDisclosure`…) with a typed text, as the
    /// apps post it: `{"properties":{"message": …}}`.
    static func act(
        _ server: TestServer, _ rel: String, on message: [String: Any], by user: TestUser, text: String
    ) async throws -> APIResponse {
        try await server.request(
            .POST, try #require(value(message, "_links", rel, "href") as? String), headers: user.passwordHeader,
            json: ["properties": ["message": text]])
    }

    static func buddyEntry(_ server: TestServer, _ user: TestUser) async throws -> [String: Any] {
        let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
        return try #require(value(profile.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies", 0) as? [String: Any])
    }

    /// Yona's `addRichardAndBobAsBuddies` with a no-go goal on news for Richard: the two and Richard's anonymized id.
    static func buddiesWithANewsNoGoGoal(_ server: TestServer) async throws -> (TestUser, TestUser, String) {
        let richard = try await server.createUser(nickname: "RQ")
        let bob = try await server.createUser(nickname: "BD")
        try await BuddyTests.connect(server, richard: richard, bob: bob)
        try await server.addNoGoGoal(richard, category: GoalsTests.news)
        return (richard, bob, try await server.vpnLogin(richard).userAnonymizedID)
    }

    /// `CommonAssertions.assertBuddyUser`: the buddy's user has exactly Yona's properties and links.
    static func assertBuddyUser(_ buddyUser: [String: Any]?, established: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        // Before the buddy shares, the server cannot know when the buddy last opened the app: that is the buddy's own
        // secret until the acceptance tells it (docs/compatibility.md). The creation time is never shown (Yona's null).
        var expected: Set<String> = ["mobileNumber", "creationTime", "firstName", "lastName", "nickname", "_links"]
        if established { expected.formUnion(["appLastOpenedDate", "_embedded"]) }
        #expect(Set((buddyUser ?? [:]).keys) == expected, sourceLocation: sourceLocation)
        #expect(buddyUser?["creationTime"] is NSNull, "a buddy's creationTime is null", sourceLocation: sourceLocation)
        if established {
            #expect(Set((buddyUser?["_embedded"] as? [String: Any] ?? [:]).keys) == ["yona:goals", "yona:devices"], sourceLocation: sourceLocation)
        }
        #expect(linkSet(buddyUser) == ["self"], sourceLocation: sourceLocation)
    }

    @Test(
        "BasicBuddyTest: Richard requests Bob to become his buddy; Bob finds the buddy request; Bob accepts Richard's buddy request; Richard finds Bob's buddy connect response; Richard and Bob can see each other's information",
        arguments: TestDatabase.available)
    func connectAndSeeEachOther(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let bob = try await server.createUser(firstName: "Bob", nickname: "BD")
            let requested = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": ["firstName": "Bobby", "lastName": "Dun", "mobileNumber": bob.mobileNumber, "emailAddress": "bob@dunn.net"]
                    ],
                    "message": "Would you like to be my buddy?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            #expect(requested.status == 201, "\(requested.text)")
            #expect(value(requested.json, "_links", "yona:user") == nil, "a buddy has no yona:user link; the user is embedded")
            Self.assertBuddyUser(value(requested.json, "_embedded", "yona:user") as? [String: Any], established: false)

            // Bob finds the request: the requester embedded, accept and reject, nothing to delete yet
            let request = try #require(try await Self.messages(server, bob, type: "BuddyConnectRequestMessage").first)
            #expect(Self.linkSet(request) == ["self", "yona:accept", "yona:reject", "yona:markRead"])
            #expect(value(request, "_embedded", "yona:user", "firstName") as? String == "Richard")
            #expect(value(request, "_embedded", "yona:user", "nickname") as? String == "RQ")
            #expect(value(request, "_embedded", "yona:user", "_links") == nil, "not followable before it is accepted")
            #expect(request["message"] as? String == "Would you like to be my buddy?")
            #expect(request["nickname"] as? String == "RQ")
            let early = try await server.request(
                .DELETE, try #require(value(request, "_links", "self", "href") as? String), headers: bob.passwordHeader)
            #expect(early.status == 400, "MessagingTest: Bob tries to delete Richard's buddy request before it is processed")
            #expect(early.errorCode == "error.cannot.delete.unprocessed.message")

            let accepted = try await Self.act(server, "yona:accept", on: request, by: bob, text: "Yes, great idea!")
            #expect(accepted.status == 200)
            let processed = try #require(value(accepted.json, "_embedded", "yona:affectedMessages", 0) as? [String: Any])
            #expect(Self.linkSet(processed).contains("edit"), "answered, the request can be deleted")
            #expect(
                value(processed, "_embedded", "yona:user", "_links", "self", "href") as? String
                    == "\(server.baseURL)/users/\(richard.id)?requestingUserId=\(bob.id)", "accepted, the requester can be followed")

            // Richard finds the response, from Bob's own account
            let response = try #require(try await Self.messages(server, richard, type: "BuddyConnectResponseMessage").first)
            #expect(response["status"] as? String == "ACCEPTED")
            #expect(response["message"] as? String == "Yes, great idea!")
            #expect(response["nickname"] as? String == "BD")
            #expect((value(response, "_links", "yona:user", "href") as? String) == "\(server.baseURL)/users/\(bob.id)?requestingUserId=\(richard.id)")
            let richardsBuddy = try await Self.buddyEntry(server, richard)
            #expect(
                value(response, "_links", "yona:buddy", "href") as? String
                    == YonaAssertions.stripped(value(richardsBuddy, "_links", "self", "href") as? String))

            // each sees the other's user: Bob's own names replace the ones Richard typed
            #expect(richardsBuddy["sendingStatus"] as? String == "ACCEPTED")
            #expect(Self.linkSet(richardsBuddy) == ["self", "edit", "yona:dailyActivityReports", "yona:weeklyActivityReports"])
            let bobAsSeen = value(richardsBuddy, "_embedded", "yona:user") as? [String: Any]
            Self.assertBuddyUser(bobAsSeen, established: true)
            #expect(bobAsSeen?["firstName"] as? String == "Bob")
            #expect(bobAsSeen?["appLastOpenedDate"] as? String == YonaAssertions.today)
            let goals = value(bobAsSeen, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [[String: Any]] ?? []
            #expect(goals.count == 1, "Bob's mandatory goal")
            #expect((value(bobAsSeen, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "name") as? String) == "First device")
            // the links Richard holds can be followed with his own password
            let selfHref = try #require(value(bobAsSeen, "_links", "self", "href") as? String)
            let fetched = try await server.request(.GET, selfHref, headers: richard.passwordHeader)
            #expect(fetched.status == 200, "\(fetched.text)")
            Self.assertBuddyUser(fetched.json, established: true)
            let goalHref = try #require(value(goals.first, "_links", "self", "href") as? String)
            #expect(goalHref.hasSuffix("?requestingUserId=\(richard.id)"))
            #expect(try await server.request(.GET, goalHref, headers: richard.passwordHeader).status == 200)
            let goalsHref = try #require(value(bobAsSeen, "_embedded", "yona:goals", "_links", "self", "href") as? String)
            #expect(
                (value(try await server.request(.GET, goalsHref, headers: richard.passwordHeader).json, "_embedded", "yona:goals") as? [Any])?.count
                    == 1)
            let richardAsSeen = value(try await Self.buddyEntry(server, bob), "_embedded", "yona:user") as? [String: Any]
            Self.assertBuddyUser(richardAsSeen, established: true)
            #expect(richardAsSeen?["nickname"] as? String == "RQ")
        }
    }

    @Test(
        "BasicBuddyTest: Richard deletes Bob's buddy entry before Bob accepts; RemoveUserTest: Remove Richard with pending buddy request to Bob and verify buddy request is removed",
        arguments: TestDatabase.available)
    func withdrawnRequests(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            let carol = try await server.createUser(nickname: "CC")
            try await OverwriteTests.invite(server, from: richard, to: bob)
            _ = try await server.messages(bob) // Bob's app has seen the request
            // a request joins no two anonymized users in plain columns before they accept each other
            #expect(try await Message.query(on: server.app.db).filter(\.$senderAnonymizedID != nil).count() == 0)
            try await OverwriteTests.invite(server, from: richard, to: carol)
            // act: Richard removes Bob before Bob answered; then Richard's account goes with Carol's request pending
            let buddy = try await Self.buddyEntry(server, richard)
            let removed = try await server.request(
                .DELETE, try #require(value(buddy, "_links", "edit", "href") as? String), headers: richard.passwordHeader)
            #expect(removed.status == 204)
            #expect(try await Self.messages(server, bob, type: "BuddyConnectRequestMessage").isEmpty)
            #expect(try await Self.messages(server, bob, type: "BuddyDisconnectMessage").isEmpty, "a request taken back is no disconnect")
            #expect(try await server.request(.DELETE, richard.path, headers: richard.passwordHeader).status == 204)
            #expect(try await server.messages(carol).isEmpty)
        }
    }

    @Test(
        "RemoveUserTest: Remove Richard while being a buddy of Bob and verify that Bob receives a buddy disconnect message; Remove Richard with pending buddy request from Bob and verify that Bob receives a reject message",
        arguments: TestDatabase.available)
    func removedAccounts(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            let dave = try await server.createUser(nickname: "DD")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            try await OverwriteTests.invite(server, from: dave, to: richard)
            try await server.addNoGoGoal(richard, category: GoalsTests.news)
            let (ua, _) = try await server.vpnLogin(richard)
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://www.refdag.nl")
            #expect(try await Self.messages(server, bob, type: "GoalConflictMessage").count == 1)
            // act
            let deleted = try await server.request(
                .DELETE, "\(richard.path)?message=Goodbye%20friends!%20I%20deinstalled%20the%20Internet",
                headers: richard.passwordHeader)
            #expect(deleted.status == 204)
            // check: Bob keeps only the disconnect, with Richard's words
            let bobsMessages = try await server.messages(bob)
            let disconnect = try #require(bobsMessages.first { $0["@type"] as? String == "BuddyDisconnectMessage" })
            #expect(disconnect["reason"] as? String == "USER_ACCOUNT_DELETED")
            #expect(disconnect["message"] as? String == "Goodbye friends! I deinstalled the Internet")
            #expect(disconnect["nickname"] as? String == "RQ")
            // As Yona: the sender's account is gone, so it is named but neither embedded nor linked
            #expect(disconnect["_embedded"] == nil)
            #expect(Self.linkSet(disconnect).subtracting(["yona:userPhoto"]) == ["self", "edit", "yona:markRead"])
            #expect(!bobsMessages.contains { ["GoalConflictMessage", "GoalChangeMessage"].contains($0["@type"] as? String) })
            // Dave's pending request ends as a rejection on Richard's behalf
            let rejection = try #require(try await Self.messages(server, dave, type: "BuddyConnectResponseMessage").first)
            #expect(rejection["status"] as? String == "REJECTED")
            #expect(rejection["message"] as? String == "User account was deleted")
            #expect(rejection["nickname"] as? String == "Richard X", "the names Dave typed")
            #expect(value(rejection, "_links", "yona:user") == nil)
            #expect(rejection["_embedded"] == nil)
        }
    }

    @Test(
        "DisclosureTest: Disclosure link is available to buddy, not to <self>; Richard receives Bob's request for disclosure of a message; Richard accepts Bob's request for disclosure of a message",
        arguments: TestDatabase.available)
    func disclosure(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob, ua) = try await Self.buddiesWithANewsNoGoGoal(server)
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://www.poker.com")
            let own = try #require(try await Self.messages(server, richard, type: "GoalConflictMessage").first)
            #expect(Self.linkSet(own) == ["self", "edit", "yona:activityCategory", "yona:dayDetails", "yona:markRead"])
            let copy = try #require(try await Self.messages(server, bob, type: "GoalConflictMessage").first)
            #expect(
                Self.linkSet(copy) == [
                    "self", "edit", "yona:buddy", "yona:activityCategory", "yona:dayDetails", "yona:requestDisclosure", "yona:markRead",
                ])
            // the day of the visit: Richard's own, and Richard's as Bob's buddy, each followable with the reader's password
            let today = UserCalendar.day(Date())
            for (message, reader) in [(own, richard), (copy, bob)] {
                let href = try #require(value(message, "_links", "yona:dayDetails", "href") as? String)
                let day = try await server.request(.GET, href, headers: reader.passwordHeader)
                #expect(day.status == 200 && day.json["date"] as? String == today, "\(href): \(day.text)")
                #expect(day.json["totalMinutesBeyondGoal"] as? Int == 1)
            }
            #expect((value(copy, "_links", "yona:dayDetails", "href") as? String)?.contains("/buddies/") == true)
            // Bob asks
            let asked = try await Self.act(server, "yona:requestDisclosure", on: copy, by: bob, text: "Can I have a look?")
            #expect(asked.status == 200)
            let request = try #require(try await Self.messages(server, richard, type: "DisclosureRequestMessage").first)
            #expect(request["message"] as? String == "Can I have a look?")
            #expect(
                Self.linkSet(request) == [
                    "self", "related", "yona:buddy", "yona:user", "yona:accept", "yona:reject", "yona:markRead", "yona:dayDetails",
                ])
            #expect(value(request, "_links", "yona:dayDetails", "href") as? String == value(own, "_links", "yona:dayDetails", "href") as? String)
            #expect(value(request, "_links", "related", "href") as? String == value(own, "_links", "self", "href") as? String)
            #expect((value(request, "_links", "yona:user", "href") as? String)?.hasPrefix("\(server.baseURL)/users/\(bob.id)") == true)
            // Richard accepts
            let accepted = try await Self.act(server, "yona:accept", on: request, by: richard, text: "Sure!")
            #expect(accepted.status == 200)
            #expect(
                Self.linkSet(value(accepted.json, "_embedded", "yona:affectedMessages", 0) as? [String: Any])
                    == ["self", "edit", "related", "yona:buddy", "yona:user", "yona:markRead", "yona:dayDetails"])
            let response = try #require(try await Self.messages(server, bob, type: "DisclosureResponseMessage").first)
            #expect(Self.linkSet(response) == ["self", "edit", "related", "yona:buddy", "yona:user", "yona:markRead", "yona:dayDetails"])
            #expect(value(response, "_links", "yona:dayDetails", "href") as? String == value(copy, "_links", "yona:dayDetails", "href") as? String)
            #expect(response["activityStartTime"] == nil, "Yona's response carries no times")
            #expect(response["message"] as? String == "Sure!")
            #expect(response["status"] as? String == "DISCLOSURE_ACCEPTED")
            #expect(value(response, "_links", "related", "href") as? String == value(copy, "_links", "self", "href") as? String)
            let disclosed = try #require(try await Self.messages(server, bob, type: "GoalConflictMessage").first)
            #expect(disclosed["url"] as? String == "http://www.poker.com")
        }
    }

    @Test("DisclosureTest: Richard rejects Bob's request for disclosure of a message", arguments: TestDatabase.available)
    func rejectedDisclosure(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob, ua) = try await Self.buddiesWithANewsNoGoGoal(server)
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://www.poker.com")
            let copy = try #require(try await Self.messages(server, bob, type: "GoalConflictMessage").first)
            let asked = try await Self.act(server, "yona:requestDisclosure", on: copy, by: bob, text: "Can I have a look?")
            #expect(asked.status == 200)
            let request = try #require(try await Self.messages(server, richard, type: "DisclosureRequestMessage").first)
            // act
            let rejected = try await Self.act(server, "yona:reject", on: request, by: richard, text: "Nope!")
            #expect(rejected.status == 200)
            // check: Richard's request is answered, Bob hears no and gets no way into Richard's day
            #expect(
                Self.linkSet(value(rejected.json, "_embedded", "yona:affectedMessages", 0) as? [String: Any])
                    == ["self", "edit", "related", "yona:buddy", "yona:user", "yona:markRead", "yona:dayDetails"])
            #expect(value(rejected.json, "_embedded", "yona:affectedMessages", 0, "status") as? String == "DISCLOSURE_REJECTED")
            let answered = try #require(try await Self.messages(server, richard, type: "DisclosureRequestMessage").first)
            #expect(answered["status"] as? String == "DISCLOSURE_REJECTED")
            #expect(value(answered, "_links", "yona:dayDetails", "href") != nil)
            let response = try #require(try await Self.messages(server, bob, type: "DisclosureResponseMessage").first)
            #expect(response["status"] as? String == "DISCLOSURE_REJECTED")
            #expect(response["_embedded"] == nil)
            #expect(response["message"] as? String == "Nope!")
            #expect(response["nickname"] as? String == "RQ")
            #expect(Self.linkSet(response) == ["self", "edit", "related", "yona:buddy", "yona:user", "yona:markRead"])
            #expect(value(response, "_links", "related", "href") as? String == value(copy, "_links", "self", "href") as? String)
            let undisclosed = try #require(try await Self.messages(server, bob, type: "GoalConflictMessage").first)
            #expect(undisclosed.keys.contains("url") && undisclosed["url"] is NSNull)
            #expect(undisclosed["status"] as? String == "DISCLOSURE_REJECTED")
        }
    }

    @Test("MessagingTest: Richard pages through his messages", arguments: TestDatabase.available)
    func pagingThroughMessagesWithSort(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // Yona's addRichard and addBob: each with a news no-go goal before they become buddies
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            try await server.addNoGoGoal(richard, category: GoalsTests.news)
            try await server.addNoGoGoal(bob, category: GoalsTests.news)
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            let richardUA = try await server.vpnLogin(richard).userAnonymizedID
            let bobUA = try await server.vpnLogin(bob).userAnonymizedID
            try await server.postNetworkActivity(
                richardUA, categories: ["news/media"], url: "http://www.refdag.nl", at: Date().addingTimeInterval(-180))
            try await server.postNetworkActivity(bobUA, categories: ["Gambling"], url: "http://www.poker.com", at: Date().addingTimeInterval(-120))
            try await server.postNetworkActivity(bobUA, categories: ["news/media"], url: "http://www.refdag.nl", at: Date().addingTimeInterval(-60))
            func types(_ page: APIResponse) -> [String] {
                (value(page.json, "_embedded", "yona:messages") as? [[String: Any]] ?? []).compactMap { $0["@type"] as? String }
            }
            let all = try await server.request(.GET, "\(richard.path)/messages/", headers: richard.passwordHeader)
            #expect(types(all).sorted() == ["BuddyConnectResponseMessage", "GoalConflictMessage", "GoalConflictMessage", "GoalConflictMessage"])
            #expect((value(all.json, "_links", "self", "href") as? String)?.contains("page=0") == true)
            // pages of two, with Spring's sort: newest first all the same, and the links carry it on
            let first = try await server.request(.GET, "\(richard.path)/messages/?page=0&size=2&sort=creationTime", headers: richard.passwordHeader)
            let second = try await server.request(.GET, "\(richard.path)/messages/?page=1&size=2&sort=creationTime", headers: richard.passwordHeader)
            for (page, number) in [(first, 0), (second, 1)] {
                let href = value(page.json, "_links", "self", "href") as? String ?? ""
                #expect(href.contains("page=\(number)") && href.contains("size=2") && href.contains("sort=creationTime"), "\(href)")
                #expect(value(page.json, "page", "totalElements") as? Int == 4)
            }
            #expect(types(first) == ["GoalConflictMessage", "GoalConflictMessage"])
            #expect(
                value(first.json, "_links", "prev") == nil
                    && (value(first.json, "_links", "next", "href") as? String)?.contains("sort=creationTime") == true)
            #expect(types(second).sorted() == ["BuddyConnectResponseMessage", "GoalConflictMessage"])
            #expect(value(second.json, "_links", "prev") != nil && value(second.json, "_links", "next") == nil)
            // Spring's paging links: first and last only where another page exists; prev one back, also past the end
            func rels(_ page: APIResponse) -> Set<String> { Set((page.json["_links"] as? [String: Any] ?? [:]).keys) }
            #expect(rels(first) == ["self", "next", "first", "last", "curies"] && rels(second) == ["self", "prev", "first", "last", "curies"])
            #expect(rels(all) == ["self", "curies"], "one page: nowhere else to go")
            let beyond = try await server.request(.GET, "\(richard.path)/messages/?page=3&size=2", headers: richard.passwordHeader)
            #expect(rels(beyond) == ["self", "prev", "first", "last", "curies"] && beyond.json["_embedded"] == nil)
            #expect((value(beyond.json, "_links", "prev", "href") as? String)?.contains("page=2") == true)
            #expect((value(beyond.json, "_links", "last", "href") as? String)?.contains("page=1") == true)
            let bad = try await server.request(.GET, "\(richard.path)/messages/?sort=creationTime;drop", headers: richard.passwordHeader)
            #expect(bad.status == 400 && bad.errorCode == "error.request.invalid.parameter")
        }
    }

    @Test(
        "MessagingTest: Richard deletes a goal conflict message. After that, it's gone for Bob too; Bob deletes a goal conflict message. After that, Richard still has it",
        arguments: TestDatabase.available)
    func deletingConflicts(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob, ua) = try await Self.buddiesWithANewsNoGoGoal(server)
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://a.example", at: Date().addingTimeInterval(-3600))
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://b.example")
            let bobsCopies = try await Self.messages(server, bob, type: "GoalConflictMessage")
            #expect(bobsCopies.count == 2)
            // Bob deletes his copy of the older one: Richard keeps his
            let bobDeleted = try await server.request(
                .DELETE, try #require(value(bobsCopies.last, "_links", "edit", "href") as? String),
                headers: bob.passwordHeader)
            #expect(bobDeleted.status == 200)
            #expect(try await Self.messages(server, richard, type: "GoalConflictMessage").count == 2)
            // Richard deletes his newer one: Bob's copy goes too
            let newest = try #require(try await Self.messages(server, richard, type: "GoalConflictMessage").first)
            let deleted = try await server.request(
                .DELETE, try #require(value(newest, "_links", "edit", "href") as? String), headers: richard.passwordHeader)
            #expect(deleted.status == 200)
            #expect((value(deleted.json, "_embedded", "yona:affectedMessages") as? [Any])?.isEmpty == true)
            #expect(try await Self.messages(server, richard, type: "GoalConflictMessage").count == 1)
            #expect(try await Self.messages(server, bob, type: "GoalConflictMessage").isEmpty)
        }
    }

    /// The buddy's own edit link in X's buddy list (Yona's `_links.edit` of the buddy).
    static func removeBuddy(_ server: TestServer, _ user: TestUser, message: String) async throws -> APIResponse {
        let edit = try #require(value(try await Self.buddyEntry(server, user), "_links", "edit", "href") as? String)
        let text = try #require(message.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        return try await server.request(.DELETE, edit + (edit.contains("?") ? "&" : "?") + "message=\(text)", headers: user.passwordHeader)
    }

    static func buddies(_ server: TestServer, _ user: TestUser) async throws -> [Any] {
        let list = try await server.request(.GET, "\(user.path)/buddies/", headers: user.passwordHeader)
        return value(list.json, "_embedded", "yona:buddies") as? [Any] ?? []
    }

    @Test(
        "BasicBuddyTest: Richard removes Bob as buddy, so goal conflicts from Bob are gone; Richard receives the buddy removal of Bob",
        arguments: TestDatabase.available)
    func removalTakesTheCopiesBothWays(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: each has a conflict of his own and a copy of the other's
            let (richard, bob, richardUA) = try await Self.buddiesWithANewsNoGoGoal(server)
            let (bobUA, _) = try await server.vpnLogin(bob)
            try await server.postNetworkActivity(richardUA, categories: ["news/media"], url: "http://refdag.example")
            try await server.postNetworkActivity(bobUA, categories: ["gambling"], url: "http://poker.example")
            #expect(try await Self.messages(server, richard, type: "GoalConflictMessage").count == 2)
            #expect(try await Self.messages(server, bob, type: "GoalConflictMessage").count == 2)
            // act: Bob removes Richard, with a message
            let text = "Richard, as you know our ways parted, so I'll remove you as buddy."
            #expect(try await Self.removeBuddy(server, bob, message: text).status == 204)
            // check: each keeps his own conflict only; Richard is told, with Bob's words
            let richards = try await server.messages(richard)
            let ownConflicts = richards.filter { $0["@type"] as? String == "GoalConflictMessage" }
            #expect(ownConflicts.count == 1)
            #expect(ownConflicts.first?["nickname"] as? String == "RQ (me)")
            let bobsConflicts = try await Self.messages(server, bob, type: "GoalConflictMessage")
            #expect(bobsConflicts.count == 1)
            #expect(bobsConflicts.first?["nickname"] as? String == "BD (me)")
            let removal = try #require(richards.first { $0["@type"] as? String == "BuddyDisconnectMessage" })
            #expect(removal["reason"] as? String == "USER_REMOVED_BUDDY")
            #expect(removal["nickname"] as? String == "BD")
            #expect(removal["message"] as? String == text)
            #expect(value(removal, "_embedded", "yona:user", "firstName") as? String != nil)
            #expect(value(removal, "_embedded", "yona:user", "_links", "self") == nil)
            #expect(Self.linkSet(removal).subtracting(["yona:userPhoto"]) == ["self", "edit", "yona:markRead"])
            #expect(try await Self.buddies(server, richard).isEmpty)
            #expect(try await Self.buddies(server, bob).isEmpty)
        }
    }

    @Test("BasicBuddyTest: Richard and Bob connect and break up multiple times", arguments: TestDatabase.available)
    func connectAndBreakUpMultipleTimes(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            func disconnect(_ from: TestUser, _ other: TestUser) async throws {
                #expect(try await Self.removeBuddy(server, from, message: "Good luck").status == 204)
                _ = try await server.messages(other)
                #expect(try await Self.buddies(server, from).isEmpty)
                #expect(try await Self.buddies(server, other).isEmpty)
            }
            func make(_ requester: TestUser, _ invitee: TestUser) async throws {
                try await BuddyTests.connect(server, richard: requester, bob: invitee)
                let responses = try await Self.messages(server, requester, type: "BuddyConnectResponseMessage")
                #expect(!responses.isEmpty)
                #expect(value(responses.first, "_links", "yona:process") == nil, "the acceptance is processed on the requester's call")
                #expect(try await Self.buddies(server, requester).count == 1)
                #expect(try await Self.buddies(server, invitee).count == 1)
            }
            // act: Yona's sequence of break-ups and new requests, from either side
            try await disconnect(richard, bob)
            try await make(bob, richard)
            try await disconnect(bob, richard)
            try await make(bob, richard)
            try await disconnect(richard, bob)
            try await make(richard, bob)
            try await disconnect(richard, bob)
            try await make(richard, bob)
            try await disconnect(bob, richard)
            try await make(bob, richard)
            // check: a conflict of either reaches the other once, and each deletes it
            for (actor, buddy, nickname) in [(richard, bob, "RQ"), (bob, richard, "BD")] {
                let (ua, _) = try await server.vpnLogin(actor)
                try await server.postNetworkActivity(ua, categories: ["gambling"], url: "http://poker.example/\(nickname)")
                let copies = try await Self.messages(server, buddy, type: "GoalConflictMessage")
                #expect(copies.count == 1, "\(nickname)'s conflict in the buddy's inbox")
                #expect(copies.first?["nickname"] as? String == nickname)
                let own = try await Self.messages(server, actor, type: "GoalConflictMessage")
                #expect(own.count == 1)
                for (user, message) in [(buddy, copies.first), (actor, own.first)] {
                    let edit = try #require(value(message, "_links", "edit", "href") as? String)
                    #expect(try await server.request(.DELETE, edit, headers: user.passwordHeader).status == 200)
                }
            }
        }
    }

    /// The acceptance waits in Richard's named inbox; ten calls of his app arrive at once. Whichever call moves it,
    /// every answer must already list it: none may see an inbox from before the move, nor fail on the move's race.
    @Test("BasicBuddyTest: Richard finds Bob's buddy connect response with multiple threads", arguments: TestDatabase.available)
    func parallelCallsEachFindTheResponse(db: TestDatabase) async throws {
        try await withServer(db) { server in
            for round in 0..<3 {
                let richard = try await server.createUser(nickname: "RQ\(round)")
                let bob = try await server.createUser(nickname: "BD\(round)")
                try await BuddyTests.connect(server, richard: richard, bob: bob)
                let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            let page = try await server.request(.GET, "\(richard.path)/messages/", headers: richard.passwordHeader)
                            let listed = (value(page.json, "_embedded", "yona:messages") as? [[String: Any]] ?? [])
                                .filter { $0["@type"] as? String == "BuddyConnectResponseMessage" }.count
                            return (page.status, listed)
                        }
                    }
                    return try await group.reduce(into: [(Int, Int)]()) { $0.append($1) }
                }
                #expect(answers.allSatisfy { $0 == (200, 1) }, "round \(round): \(answers)")
                #expect(try await Self.buddies(server, richard).count == 1, "applied once")
            }
        }
    }

    @Test(
        "CreateUserOnBuddyRequestTest: Overwrite user created on buddy request; Overwrite user created on buddy request and connect again",
        arguments: TestDatabase.available)
    func overwriteAnInvitedAccountAndConnectAgain(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard invites a number nobody registered; its owner never takes the account over
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let number = randomMobileNumber()
            _ = try await InvitationTests.invite(server, richard: richard, number: number)
            // act: the number's owner installs the app and overwrites the invited account
            #expect(try await OverwriteTests.requestCode(server, number).status == 204)
            let created = try await server.request(
                .POST, "/users/?overwriteUserConfirmationCode=1234",
                json: ["firstName": "Bob Changed", "lastName": "Dunn Changed", "nickname": "BD Changed", "mobileNumber": number])
            // check: a new confirmed account with the mandatory goal only, and no buddy on either side
            #expect(created.status == 201, "\(created.text)")
            YonaAssertions.assertUser(created.json)
            #expect(created.json["firstName"] as? String == "Bob Changed" && created.json["nickname"] as? String == "BD Changed")
            #expect((value(created.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any])?.count == 1)
            let selfHref = try #require(value(created.json, "_links", "self", "href") as? String)
            let bobID = try #require(YonaAssertions.stripped(selfHref)?.split(separator: "/").last.map(String.init))
            let bob = TestUser(
                id: bobID, password: try #require(created.json["yonaPassword"] as? String), mobileNumber: number, firstName: "Bob Changed",
                nickname: "BD Changed")
            #expect(try await Self.buddies(server, richard).isEmpty)
            #expect(try await Self.buddies(server, bob).isEmpty)
            let told = try await server.messages(richard)
            #expect(told.count == 1, "\(told.map { $0["@type"] ?? "" })")
            #expect(told.first?["@type"] as? String == "BuddyConnectResponseMessage")
            #expect(told.first?["message"] as? String == "User account was deleted")
            #expect(told.first?["nickname"] as? String == "Bobby Dun")
            #expect(value(told.first, "_links", "yona:process") == nil)

            // and they connect again: a conflict of Richard's reaches the new Bob
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            #expect(try await Self.buddies(server, richard).count == 1)
            #expect(try await Self.buddies(server, bob).count == 1)
            try await server.addNoGoGoal(richard, category: GoalsTests.news)
            let (ua, _) = try await server.vpnLogin(richard)
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://refdag.example")
            let own = try #require(try await Self.messages(server, richard, type: "GoalConflictMessage").first)
            #expect(own["nickname"] as? String == "RQ (me)")
            #expect(own["url"] as? String == "http://refdag.example")
            let copy = try #require(try await Self.messages(server, bob, type: "GoalConflictMessage").first)
            #expect(copy["nickname"] as? String == "RQ")
            #expect(copy["url"] == nil || copy["url"] is NSNull)
        }
    }

    @Test("CreateUserOnBuddyRequestTest: Try update Bob with incomplete device data", arguments: TestDatabase.available)
    func takeOverWithIncompleteDeviceData(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            // each row takes over a fresh invitation, with the body as Yona's app builds it: what the link's GET
            // answered (links, password and creation time included) plus the device, one field left out
            let device: [String: Any] = [
                "deviceName": "My phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "3.0", "deviceAppVersionCode": 10000,
                "deviceFirebaseInstanceId": "SomeLongString",
            ]
            for (missing, status) in [
                ("deviceOperatingSystem", 400), ("deviceAppVersion", 400), ("deviceAppVersionCode", 400), ("deviceFirebaseInstanceId", 200),
            ] {
                let number = randomMobileNumber()
                let link = try await InvitationTests.invite(server, richard: richard, number: number)
                let opened = try await server.request(.GET, link)
                try #require(opened.status == 200, "\(opened.text)")
                var body = opened.json.merging(device) { $1 }
                body[missing] = nil
                let taken = try await server.request(.PUT, link, json: body)
                #expect(taken.status == status, "\(missing): \(taken.text)")
                if status == 400 {
                    #expect(taken.errorCode == "error.request.missing.property", "\(missing)")
                    #expect((taken.json["message"] as? String)?.hasPrefix("Mandatory property '\(missing)'") == true, "\(taken.text)")
                }
            }
        }
    }

    @Test("CreateUserOnBuddyRequestTest: Bob updates his user information saved with the device password", arguments: TestDatabase.available)
    func takeOverThenUpdateBeforeConfirming(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let number = randomMobileNumber()
            let link = try await InvitationTests.invite(server, richard: richard, number: number)
            let opened = try await server.request(.GET, link)
            let openedSelf = try #require(value(opened.json, "_links", "self", "href") as? String)
            // act: the take-over without a device (device fields without a name are dropped unread, as Yona's
            // updateUser), with a password of the app's own (ignored) and the self link read
            let taken = try await server.request(
                .PUT, link,
                json: [
                    "firstName": "Bobby", "lastName": "Dun", "nickname": "Bobby", "mobileNumber": number, "yonaPassword": "B o b",
                    "_links": ["self": ["href": openedSelf]], "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "3.0",
                ])
            #expect(taken.status == 200, "\(taken.text)")
            YonaAssertions.assertUser(taken.json)
            #expect(value(taken.json, "_links", "yona:confirmMobileNumber") != nil)
            let password = try #require(taken.json["yonaPassword"] as? String)
            #expect(password != "B o b")
            let bobID = try #require(URLComponents(string: link)?.path.split(separator: "/").last.map(String.init))
            // the app reloads with the password it was given, then updates through the self link before confirming
            let reloaded = try await server.request(.GET, "/users/\(bobID)?requestingUserId=\(bobID)", headers: [("Yona-Password", password)])
            #expect(reloaded.status == 200, "\(reloaded.text)")
            YonaAssertions.assertUser(reloaded.json)
            let selfHref = try #require(value(reloaded.json, "_links", "self", "href") as? String)
            #expect(YonaAssertions.query(selfHref, "requestingDeviceId") != nil)
            let updated = try await server.request(
                .PUT, selfHref, headers: [("Yona-Password", password)],
                json: [
                    "firstName": "Bobby", "lastName": "Dun", "nickname": "Robert", "mobileNumber": number, "yonaPassword": password,
                    "_links": ["self": ["href": selfHref]],
                ])
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.json["nickname"] as? String == "Robert")
            YonaAssertions.assertUser(updated.json)
        }
    }

    @Test(
        "OverwriteUserTest: Overwrite Richard with pending buddy invitation from Bob and immediately send another buddy connect request",
        arguments: TestDatabase.available)
    func overwriteThenRequestAgain(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Bob asks Richard; Richard loses his phone before answering and overwrites his account
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let bob = try await server.createUser(firstName: "Bob", nickname: "BD")
            try await OverwriteTests.invite(server, from: bob, to: richard)
            #expect(try await OverwriteTests.requestCode(server, richard.mobileNumber).status == 204)
            let created = try await server.request(
                .POST, "/users/?overwriteUserConfirmationCode=1234",
                json: ["firstName": "RichardChanged", "lastName": "QuinnChanged", "nickname": "RQChanged", "mobileNumber": richard.mobileNumber])
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(
                YonaAssertions.stripped(value(created.json, "_links", "self", "href") as? String)?.split(separator: "/").last.map(String.init))
            let changed = TestUser(
                id: id, password: try #require(created.json["yonaPassword"] as? String), mobileNumber: richard.mobileNumber,
                firstName: "RichardChanged", nickname: "RQChanged")
            #expect(try await Self.buddies(server, changed).isEmpty)
            // act: the new account asks Bob at once
            try await OverwriteTests.invite(server, from: changed, to: bob)
            // check: Bob has no buddy yet; he is told the old account went and finds the new request
            #expect(try await Self.buddies(server, bob).isEmpty)
            let bobs = try await server.messages(bob)
            #expect(bobs.count == 2, "\(bobs.map { $0["@type"] ?? "" })")
            let gone = try #require(bobs.first { $0["@type"] as? String == "BuddyConnectResponseMessage" })
            #expect(gone["message"] as? String == "User account was deleted")
            #expect(value(gone, "_links", "yona:process") == nil)
            let request = try #require(bobs.first { $0["@type"] as? String == "BuddyConnectRequestMessage" })
            #expect(request["nickname"] as? String == "RQChanged")
            #expect(request["status"] as? String == "REQUESTED")
            #expect(value(request, "_embedded", "yona:user", "firstName") as? String == "RichardChanged")
            #expect(Self.linkSet(request).subtracting(["yona:userPhoto"]) == ["self", "yona:accept", "yona:reject", "yona:markRead"])
            #expect(try await server.messages(changed).isEmpty)
        }
    }

    @Test("OverwriteUserTest: Concurrent requests cause no errors", arguments: TestDatabase.available)
    func concurrentOverwriteRequests(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<5 { group.addTask { try await OverwriteTests.requestCode(server, richard.mobileNumber).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == [204, 204, 204, 204, 204])
            #expect(try await OverwriteTests.overwrite(server, richard.mobileNumber).status == 201)
        }
    }

    @Test("CreateUserOnBuddyRequestTest: Richard cannot create a buddy request before confirming his own mobile number")
    func noBuddyRequestBeforeConfirming() async throws {
        try await withServer(.sqlite) { server in
            let richard = try await server.createUser(confirm: false)
            let request = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": [
                            "firstName": "Bobby", "lastName": "Dun", "emailAddress": "bobdunn325@gmail.com", "mobileNumber": randomMobileNumber(),
                        ]
                    ],
                    "message": "Would you like to be my buddy?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            #expect(request.status == 400)
            #expect(request.errorCode == "error.mobile.number.not.confirmed")
        }
    }

    @Test("EditGoalsTest: Add budget goal; Delete goal; Goal conflict messages are removed when goal is removed", arguments: TestDatabase.available)
    func goalChangeMessages(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            let added = try await server.request(
                .POST, "\(richard.path)/goals/?message=Going%20to%20monitor%20my%20social%20time!",
                headers: richard.passwordHeader,
                json: YonaGoalFeatureTests.budget(server, GoalsTests.social, "60"))
            #expect(added.status == 201, "\(added.text)")
            #expect(added.json["maxDurationMinutes"] as? Int == 60)
            let change = try #require(try await Self.messages(server, bob, type: "GoalChangeMessage").first)
            #expect(change["change"] as? String == "GOAL_ADDED")
            #expect(change["message"] as? String == "Going to monitor my social time!")
            #expect(change["nickname"] as? String == "RQ")
            #expect(Self.linkSet(change) == ["self", "edit", "related", "yona:user", "yona:buddy", "yona:markRead"])
            #expect(value(change, "_links", "related", "href") as? String == "\(server.baseURL)/activityCategories/\(GoalsTests.social)")
            #expect(
                value(change, "_links", "yona:buddy", "href") as? String
                    == YonaAssertions.stripped(value(try await Self.buddyEntry(server, bob), "_links", "self", "href") as? String))
            #expect((value(change, "_links", "yona:user", "href") as? String)?.hasPrefix("\(server.baseURL)/users/\(richard.id)") == true)
            #expect(change["_embedded"] == nil)
            #expect(try await Self.messages(server, richard, type: "GoalChangeMessage").isEmpty)
            // a conflict on the goal, then the goal goes: its conflicts go from both inboxes; the deletion is told
            let (ua, _) = try await server.vpnLogin(richard)
            try await server.postNetworkActivity(ua, categories: ["social"], url: "http://social.example")
            let noGo = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: YonaGoalFeatureTests.budget(server, GoalsTests.news, "0"))
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "http://www.refdag.nl")
            #expect(try await Self.messages(server, richard, type: "GoalConflictMessage").count == 1)
            #expect(try await Self.messages(server, bob, type: "GoalConflictMessage").count == 1)
            let removed = try await server.request(
                .DELETE, YonaActivityFeatureTests.adding("message=Bye", to: try #require(value(noGo.json, "_links", "edit", "href") as? String)),
                headers: richard.passwordHeader)
            #expect(removed.status == 204)
            #expect(try await Self.messages(server, richard, type: "GoalConflictMessage").isEmpty)
            #expect(try await Self.messages(server, bob, type: "GoalConflictMessage").isEmpty)
            let deletion = try #require(try await Self.messages(server, bob, type: "GoalChangeMessage").first)
            #expect(deletion["change"] as? String == "GOAL_DELETED")
            #expect(deletion["message"] as? String == "Bye")
        }
    }

    @Test(
        "UpdateBuddyUserInfoTest: Buddy updates info which causes buddy info change message and nickname update on process; Buddy changes first and last name which causes buddy info change message too",
        arguments: TestDatabase.available)
    func buddyInfoChange(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(firstName: "Bob", nickname: "BD")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            let bobsProfile = try await server.request(.GET, bob.profilePath, headers: bob.passwordHeader)
            let edit = try #require(value(bobsProfile.json, "_links", "self", "href") as? String)
            let updated = try await server.request(
                .PUT, edit, headers: bob.passwordHeader,
                json: [
                    "firstName": "Robert", "lastName": "Dunstan", "nickname": "Bobby", "mobileNumber": bob.mobileNumber,
                    "yonaPassword": bob.password, "_links": ["self": ["href": edit]],
                ])
            #expect(updated.status == 200, "\(updated.text)")
            let changes = try await Self.messages(server, richard, type: "BuddyInfoChangeMessage")
            #expect(changes.count == 1)
            #expect(Self.linkSet(changes.first) == ["self", "edit", "yona:user", "yona:buddy", "yona:markRead"])
            #expect(changes.first?["nickname"] as? String == "Bobby")
            #expect(changes.first?["message"] as? String == "User changed personal info")
            let bobAsSeen = value(try await Self.buddyEntry(server, richard), "_embedded", "yona:user") as? [String: Any]
            #expect(bobAsSeen?["nickname"] as? String == "Bobby")
            #expect(bobAsSeen?["firstName"] as? String == "Robert")
            #expect(bobAsSeen?["lastName"] as? String == "Dunstan")
        }
    }

    @Test(
        "DeviceManagementTest: Richard updates his device name; Bob gets the update; Richard deletes one of his devices; Bob gets the update",
        arguments: TestDatabase.available)
    func deviceChangeMessages(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            let (deviceID, _) = try await DevicesTests.firstDevice(server, richard)
            let renamed = try await server.request(
                .PUT, "\(richard.path)/devices/\(deviceID)", headers: richard.passwordHeader,
                json: ["name": "Richard's iPhone"])
            #expect(renamed.status == 200)
            let change = try #require(try await Self.messages(server, bob, type: "BuddyDeviceChangeMessage").first)
            #expect(change["message"] as? String == "User renamed device 'First device' into 'Richard's iPhone'")
            #expect(Self.linkSet(change) == ["self", "edit", "yona:user", "yona:buddy", "yona:markRead"])
            let richardAsSeen = value(try await Self.buddyEntry(server, bob), "_embedded", "yona:user") as? [String: Any]
            #expect(value(richardAsSeen, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "name") as? String == "Richard's iPhone")
        }
    }

    @Test(
        "CreateUserOnBuddyRequestTest: Richard successfully creates a buddy request after confirming his own mobile number; Bob downloads the app and uses it to open the link sent in the e-mail and load the prefilled data provided by Richard; Bob adjusts data and submits; app saves with the device password",
        arguments: TestDatabase.available)
    func invitedAccount(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let number = randomMobileNumber()
            let inviteURL = try await InvitationTests.invite(server, richard: richard, number: number)
            let buddy = try await Self.buddyEntry(server, richard)
            #expect(value(buddy, "_embedded", "yona:user", "firstName") as? String == "Bobby")
            #expect(value(buddy, "_embedded", "yona:user", "appLastOpenedDate") == nil)
            #expect(value(buddy, "_links", "yona:user") == nil)
            // Bob's app opens the link
            let opened = try await server.request(.GET, inviteURL)
            #expect(opened.status == 200)
            #expect(Set(opened.json.keys) == ["mobileNumber", "creationTime", "_links", "firstName", "lastName", "nickname", "yonaPassword"])
            #expect((opened.json["yonaPassword"] as? String)?.hasPrefix("AES:128:") == true)
            #expect(opened.json["lastName"] as? String == "Dun")
            #expect(value(opened.json, "_links", "yona:confirmMobileNumber") == nil)
            // and saves Bob's own data to the same link, as Yona's app does (the body it got back, changed)
            var body = opened.json
            body["firstName"] = "Bob"
            body["lastName"] = "Dunn"
            body["nickname"] = "BD"
            body["_links"] = ["self": ["href": value(opened.json, "_links", "self", "href") as? String ?? ""]]
            let saved = try await server.request(.PUT, inviteURL, json: body.filter { $0.key != "creationTime" })
            #expect(saved.status == 200, "\(saved.text)")
            YonaAssertions.assertUser(saved.json)
            #expect(!(value(saved.json, "_links", "self", "href") as? String ?? "tempPassword").contains("tempPassword"))
            #expect(saved.json["yonaPassword"] as? String == opened.json["yonaPassword"] as? String)
            let again = try await server.request(.GET, inviteURL)
            #expect(again.status == 400)
            #expect(again.errorCode == "error.decrypting.data")
            let password = try #require(saved.json["yonaPassword"] as? String)
            let reloaded = try await server.request(
                .GET, try #require(value(saved.json, "_links", "self", "href") as? String),
                headers: [("Yona-Password", password)])
            #expect(reloaded.json["firstName"] as? String == "Bob")
            #expect(reloaded.json["_embedded"] == nil, "the number is not confirmed yet")
        }
    }
}
