import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// api.md "Buddies" and the confidential copy of a goal conflict, with disclosure.
@Suite struct BuddyTests {
    /// Richard invites Bob; Bob accepts. Returns both, connected.
    static func connect(_ server: some APIDriving, richard: TestUser, bob: TestUser) async throws {
        let invited = try await server.request(
            .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
            json: [
                "_embedded": [
                    "yona:user": ["firstName": "Bob", "lastName": "Dunn", "mobileNumber": bob.mobileNumber, "emailAddress": "bob@example.com"]
                ],
                "message": "Shall we?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
            ])
        try #require(invited.status == 201, "invite: \(invited.text)")
        let request = try #require(try await server.messages(bob).first { $0["@type"] as? String == "BuddyConnectRequestMessage" })
        let accept = try #require(value(request, "_links", "yona:accept", "href") as? String)
        let accepted = try await server.request(.POST, accept, headers: bob.passwordHeader, json: ["properties": ["message": "Yes"]])
        try #require(accepted.status == 200, "accept: \(accepted.text)")
    }

    static func phone(_ fiid: String) -> [String: Any] {
        [
            "deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
            "deviceFirebaseInstanceId": fiid,
        ]
    }

    @Test(arguments: TestDatabase.available)
    func buddiesConnectThroughRequestAndAcceptance(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let richard = try await server.createUser(nickname: "Dad")
            let bob = try await server.createUser(nickname: "Bobby")
            // act: invite
            let invited = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": ["firstName": "Bob", "lastName": "Dunn", "mobileNumber": bob.mobileNumber, "emailAddress": "b@example.com"]
                    ],
                    "message": "Shall we?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            // check: the requester's buddy, still requested, embeds the user
            #expect(invited.status == 201, "\(invited.text)")
            #expect(invited.json["sendingStatus"] as? String == "REQUESTED")
            #expect(value(invited.json, "_embedded", "yona:user", "mobileNumber") as? String == bob.mobileNumber)
            // the invitee's request, with accept and reject
            let request = try #require(try await server.messages(bob).first)
            #expect(request["@type"] as? String == "BuddyConnectRequestMessage")
            #expect(request["nickname"] as? String == "Dad")
            #expect(request["message"] as? String == "Shall we?")
            #expect(value(request, "_links", "yona:reject") != nil)
            let accept = try #require(value(request, "_links", "yona:accept", "href") as? String)
            let accepted = try await server.request(.POST, accept, headers: bob.passwordHeader, json: ["properties": ["message": "Sure"]])
            #expect(accepted.status == 200)
            #expect(value(accepted.json, "_embedded", "yona:affectedMessages", 0, "status") as? String == "ACCEPTED")
            #expect(value(accepted.json, "_embedded", "yona:affectedMessages", 0, "_links", "yona:accept") == nil)
            // the requester sees the response and, on this call already, both statuses accepted
            let response = try #require(try await server.messages(richard).first)
            #expect(response["@type"] as? String == "BuddyConnectResponseMessage")
            #expect(response["status"] as? String == "ACCEPTED")
            #expect(response["nickname"] as? String == "Bobby")
            let buddies = try await server.request(.GET, "\(richard.path)/buddies/", headers: richard.passwordHeader)
            let buddy = try #require(value(buddies.json, "_embedded", "yona:buddies", 0) as? [String: Any])
            #expect(buddy["sendingStatus"] as? String == "ACCEPTED")
            #expect(buddy["receivingStatus"] as? String == "ACCEPTED")
            #expect(value(buddy, "_embedded", "yona:user", "nickname") as? String == "Bobby")
            #expect(value(buddy, "_embedded", "yona:user", "firstName") as? String == bob.firstName, "the buddy's own names replace the typed ones")
            let bobsSide = try await server.request(.GET, "\(bob.path)/buddies/", headers: bob.passwordHeader)
            #expect(value(bobsSide.json, "_embedded", "yona:buddies", 0, "_embedded", "yona:user", "firstName") as? String == richard.firstName)
            let profile = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            #expect((value(profile.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [Any])?.count == 1)
            // the buddy view: names, number, nickname and goals; no devices, tokens or password
            let buddyView = try await server.request(.GET, "\(bob.path)?requestingUserId=\(richard.id)", headers: richard.passwordHeader)
            #expect(buddyView.status == 200, "\(buddyView.text)")
            #expect(buddyView.json["nickname"] as? String == "Bobby")
            #expect(buddyView.json["mobileNumber"] as? String == bob.mobileNumber)
            #expect((value(buddyView.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any])?.count == 1, "the mandatory goal")
            #expect(buddyView.json["yonaPassword"] == nil)
            #expect(!buddyView.text.contains("firebaseInstanceId") && !buddyView.text.contains("vpnLoginID"))
            let stranger = try await server.createUser()
            let notABuddy = try await server.request(.GET, "\(bob.path)?requestingUserId=\(stranger.id)", headers: stranger.passwordHeader)
            // Yona's 404 error.buddy.not.found.for.user, never error.user.not.found.id: Yona's Android app reads that as
            // its own account gone and wipes itself (a message about a buddy since removed leads here)
            #expect(notABuddy.status == 404 && notABuddy.errorCode == "error.buddy.not.found.for.user", "\(notABuddy.text)")
            let notABuddysGoals = try await server.request(
                .GET, "\(bob.path)/goals/?requestingUserId=\(stranger.id)", headers: stranger.passwordHeader)
            #expect(notABuddysGoals.status == 404 && notABuddysGoals.errorCode == "error.buddy.not.found.for.user", "\(notABuddysGoals.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func theBuddyLearnsOnlyThatADangerZoneWasEnteredUntilDisclosure(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Bob has a danger zone on gambling, Richard is his buddy; both have phones
            let richard = try await server.createUser(nickname: "Dad", extra: Self.phone("fiid-richard"))
            let bob = try await server.createUser(nickname: "Bobby", extra: Self.phone("fiid-bob"))
            try await Self.connect(server, richard: richard, bob: bob)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(bob)
            try await PendingPush.query(on: server.app.db).delete()

            // act: Bob visits a poker site
            let posted = try await server.postNetworkActivity(
                ua, deviceIndex: index, categories: ["gambling"],
                url: "https://poker.example/bob", at: Date().addingTimeInterval(-120))
            #expect(posted.status == 204)
            // one push queued per recipient device (before anyone's next call moves other messages in)
            #expect(try await PendingPush.query(on: server.app.db).count() == 2)

            // check: Bob is reminded with the URL; Richard learns nickname, category and time, not the URL
            let own = try #require(try await server.messages(bob).first)
            #expect(own["@type"] as? String == "GoalConflictMessage")
            #expect(own["nickname"] as? String == "Bobby (me)")
            #expect(own["url"] as? String == "https://poker.example/bob")
            let copy = try #require(try await server.messages(richard).first)
            #expect(copy["@type"] as? String == "GoalConflictMessage")
            #expect(copy["nickname"] as? String == "Bobby")
            #expect(copy.keys.contains("url") && copy["url"] is NSNull, "the buddy's copy has url: null")
            #expect(copy["activityStartTime"] as? String == own["activityStartTime"] as? String)
            #expect((value(copy, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(GoalsTests.gambling) == true)

            // act: Richard asks, Bob accepts
            let ask = try #require(value(copy, "_links", "yona:requestDisclosure", "href") as? String)
            let asked = try await server.request(.POST, ask, headers: richard.passwordHeader, json: ["properties": [:]])
            #expect(asked.status == 200, "\(asked.text)")
            #expect(value(asked.json, "_embedded", "yona:affectedMessages", 0, "status") as? String == "DISCLOSURE_REQUESTED")
            let disclosureRequest = try #require(try await server.messages(bob).first)
            #expect(disclosureRequest["@type"] as? String == "DisclosureRequestMessage")
            #expect(disclosureRequest["nickname"] as? String == "Dad")
            let accept = try #require(value(disclosureRequest, "_links", "yona:accept", "href") as? String)
            #expect(try await server.request(.POST, accept, headers: bob.passwordHeader, json: ["properties": [:]]).status == 200)

            // check: Richard's copy now shows the URL, and he was told
            let richardsMessages = try await server.messages(richard)
            #expect(richardsMessages.first?["@type"] as? String == "DisclosureResponseMessage")
            #expect(richardsMessages.first?["status"] as? String == "DISCLOSURE_ACCEPTED")
            let disclosed = try #require(richardsMessages.first { $0["@type"] as? String == "GoalConflictMessage" })
            #expect(disclosed["url"] as? String == "https://poker.example/bob")
            #expect(disclosed["status"] as? String == "DISCLOSURE_ACCEPTED")
        }
    }

    @Test(arguments: TestDatabase.available)
    func disconnectsStopTheSharing(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "Dad")
            let bob = try await server.createUser(nickname: "Bobby")
            try await Self.connect(server, richard: richard, bob: bob)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let (ua, _) = try await server.vpnLogin(bob)
            // Richard removes Bob
            let buddyHref = try #require(
                value(
                    try await server.request(.GET, "\(richard.path)/buddies/", headers: richard.passwordHeader).json,
                    "_embedded", "yona:buddies", 0, "_links", "self", "href") as? String)
            #expect(try await server.request(.DELETE, buddyHref, headers: richard.passwordHeader).status == 204)
            #expect(try await server.request(.GET, buddyHref, headers: richard.passwordHeader).errorCode == "error.buddy.not.found")
            let disconnect = try #require(try await server.messages(bob).first)
            #expect(disconnect["@type"] as? String == "BuddyDisconnectMessage")
            #expect(disconnect["reason"] as? String == "USER_REMOVED_BUDDY")
            #expect(
                (value(try await server.request(.GET, "\(bob.path)/buddies/", headers: bob.passwordHeader).json, "_embedded", "yona:buddies")
                    as? [Any])?.isEmpty == true)
            // a new conflict reaches Bob only
            try await server.postNetworkActivity(ua, categories: ["gambling"], url: "https://poker.example/after")
            #expect(try await server.messages(richard).allSatisfy { $0["@type"] as? String != "GoalConflictMessage" })

            // connect again, then Bob deletes his account
            try await Self.connect(server, richard: richard, bob: bob)
            #expect(try await server.request(.DELETE, bob.path, headers: bob.passwordHeader).status == 204)
            let gone = try #require(try await server.messages(richard).first)
            #expect(gone["@type"] as? String == "BuddyDisconnectMessage")
            #expect(gone["reason"] as? String == "USER_ACCOUNT_DELETED")
            let afterDelete = try await server.request(.GET, "\(richard.path)/buddies/", headers: richard.passwordHeader)
            #expect((value(afterDelete.json, "_embedded", "yona:buddies") as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func goalAndDeviceNameChangesAreAnnouncedButInstanceIDsNever(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "Dad")
            let bob = try await server.createUser(nickname: "Bobby")
            try await Self.connect(server, richard: richard, bob: bob)
            _ = try await server.messages(richard)
            let before = try await server.messages(richard).count
            // a goal
            try await server.addNoGoGoal(bob, category: GoalsTests.news)
            let goalChange = try #require(try await server.messages(richard).first)
            #expect(goalChange["@type"] as? String == "GoalChangeMessage")
            #expect(goalChange["change"] as? String == "GOAL_ADDED")
            #expect(goalChange["nickname"] as? String == "Bobby")
            #expect((value(goalChange, "_links", "related", "href") as? String)?.hasSuffix(GoalsTests.news) == true)
            // a new Instance ID: nothing; a new name: announced
            let (deviceID, _) = try await DevicesTests.firstDevice(server, bob)
            let devicePath = "\(bob.path)/devices/\(deviceID)"
            _ = try await server.request(
                .PUT, devicePath, headers: bob.passwordHeader, json: ["name": "First device", "firebaseInstanceId": "fiid-new"])
            #expect(try await server.messages(richard).count == before + 1)
            _ = try await server.request(.PUT, devicePath, headers: bob.passwordHeader, json: ["name": "Bob's phone"])
            let rename = try #require(try await server.messages(richard).first)
            #expect(rename["@type"] as? String == "BuddyDeviceChangeMessage")
            #expect(rename["change"] as? String == "DEVICE_RENAMED")
            #expect(rename["newName"] as? String == "Bob's phone")
            #expect(try await server.messages(richard).count == before + 2)
            for message in try await server.messages(richard) { #expect(!String(describing: message).contains("fiid-new")) }
        }
    }

    @Test(arguments: TestDatabase.available)
    func theBuddyViewShowsDeviceNamesAsTheBuddyAnnouncedThem(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: both sides connected; Bob has one phone
            let richard = try await server.createUser(nickname: "Dad", extra: Self.phone("fiid-richard-names"))
            let bob = try await server.createUser(nickname: "Bobby", extra: Self.phone("fiid-bob-names"))
            try await Self.connect(server, richard: richard, bob: bob)
            func deviceNames(of subject: TestUser, seenBy viewer: TestUser) async throws -> [String]? {
                let view = try await server.request(.GET, "\(subject.path)?requestingUserId=\(viewer.id)", headers: viewer.passwordHeader)
                try #require(view.status == 200, "\(view.text)")
                #expect(!view.text.contains("fiid-"), "a buddy never sees Instance IDs")
                return (value(view.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]])?
                    .compactMap { $0["name"] as? String }
            }
            // check: each side knows the other's devices from the request and the response
            #expect(try await deviceNames(of: bob, seenBy: richard) == ["Phone"])
            #expect(try await deviceNames(of: richard, seenBy: bob) == ["Phone"])
            // act: Bob renames his phone, adds a tablet, then removes the phone
            let (phoneID, _) = try await DevicesTests.firstDevice(server, bob)
            let renamed = try await server.request(.PUT, "\(bob.path)/devices/\(phoneID)", headers: bob.passwordHeader, json: ["name": "Bob's phone"])
            #expect(renamed.status == 200, "\(renamed.text)")
            #expect(try await deviceNames(of: bob, seenBy: richard) == ["Bob's phone"])
            try await NewDeviceRequestTests.addDevice(server, bob, name: "Tablet")
            #expect(try await deviceNames(of: bob, seenBy: richard) == ["Bob's phone", "Tablet"])
            let deleted = try await server.request(.DELETE, "\(bob.path)/devices/\(phoneID)", headers: bob.passwordHeader)
            #expect(deleted.status == 204, "\(deleted.text)")
            // check: the view follows, and each change was also a message
            #expect(try await deviceNames(of: bob, seenBy: richard) == ["Tablet"])
            let changes = try await server.messages(richard).filter { $0["@type"] as? String == "BuddyDeviceChangeMessage" }.compactMap {
                $0["change"] as? String
            }
            #expect(changes == ["DEVICE_DELETED", "DEVICE_ADDED", "DEVICE_RENAMED"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func buddyRequestErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let bob = try await server.createUser()
            try await Self.connect(server, richard: richard, bob: bob)
            func invite(_ number: String, sending: String = "REQUESTED") -> [String: Any] {
                [
                    "_embedded": ["yona:user": ["firstName": "X", "lastName": "Y", "mobileNumber": number, "emailAddress": "buddy@example.com"]],
                    "message": "hi", "sendingStatus": sending, "receivingStatus": "REQUESTED",
                ]
            }
            func with(_ key: String, _ newValue: Any?) -> [String: Any] {
                var body = invite(randomMobileNumber())
                var user = value(body, "_embedded", "yona:user") as! [String: Any]
                user[key] = newValue
                body["_embedded"] = ["yona:user": user]
                return body
            }
            func without(_ key: String) -> [String: Any] { with(key, nil) }
            let cases: [(String, [String: Any], Int, String)] = [
                ("one-way", invite(randomMobileNumber(), sending: "NOT_REQUESTED"), 400, "error.buddy.only.twoway.buddies.allowed"),
                ("self", invite(richard.mobileNumber), 400, "error.buddy.cannot.invite.self"),
                ("existing", invite(bob.mobileNumber), 400, "error.buddy.cannot.invite.existing.buddy"),
                ("bad number", invite("0612345678"), 400, "error.user.mobile.number.invalid"),
                // BuddyValidationTest: Yona's code per missing property, the e-mail address included
                ("no first name", without("firstName"), 400, "error.user.firstname"),
                ("no last name", without("lastName"), 400, "error.user.lastname"),
                ("no number", without("mobileNumber"), 400, "error.user.mobile.number"),
                ("no e-mail address", without("emailAddress"), 400, "error.user.email.address"),
                ("bad e-mail address", with("emailAddress", "a@b@c.c"), 400, "error.user.email.address.invalid"),
                // issue 13, attack 4: an invitee's name is texted; it cannot be a message or a URL
                (
                    "a long text as a name", with("firstName", "Visit https://evil.example now " + String(repeating: "x", count: 60_000)), 400,
                    "error.user.name.invalid"
                ),
            ]
            for (name, body, status, code) in cases {
                let response = try await server.request(.POST, "\(richard.path)/buddies/", headers: richard.passwordHeader, json: body)
                #expect(response.status == status, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
            let unknown = try await server.request(.GET, "\(richard.path)/buddies/\(UUID())", headers: richard.passwordHeader)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "error.buddy.not.found")
        }
    }
}
