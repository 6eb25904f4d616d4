import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// api.md "Buddies": an invitee without an account gets one "created on buddy request", an invitation
/// with a link carrying a temporary password, and takes the account over from the app.
@Suite struct InvitationTests {
    /// Richard invites a number without an account; returns the link from the invitation mail.
    static func invite(_ server: TestServer, richard: TestUser, number: String) async throws -> String {
        let invited = try await server.request(
            .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
            json: [
                "_embedded": ["yona:user": ["firstName": "Bobby", "lastName": "Dun", "mobileNumber": number, "emailAddress": "bob@example.com"]],
                "message": "Would you like to be my buddy?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
            ])
        try #require(invited.status == 201, "invite: \(invited.text)")
        let mail = try await server.request(.GET, "/test/emails/last")
        try #require(mail.status == 200, "mail: \(mail.text)")
        let body = try #require(mail.json["body"] as? String)
        let start = try #require(body.range(of: "click <a href=\"")).upperBound
        let end = try #require(body[start...].firstIndex(of: "\""))
        // taken verbatim, as Yona's tests take it
        return String(body[start..<end])
    }

    static func takeOverBody(number: String, deviceName: String = "My S8") -> [String: Any] {
        [
            "firstName": "Bob", "lastName": "Dunn", "nickname": "BD", "mobileNumber": number,
            "deviceName": deviceName, "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
        ]
    }

    @Test(arguments: TestDatabase.available)
    func anInviteeTakesTheAccountOverAndBecomesABuddy(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let number = randomMobileNumber()
            // act: invite a number nobody registered
            let link = try await Self.invite(server, richard: richard, number: number)
            // check: the mail names the inviter and carries a link with a temporary password
            let mail = try await server.request(.GET, "/test/emails/last")
            #expect(mail.json["subject"] as? String == "Become friend of Richard LnRichard on Yona!")
            #expect(mail.json["to"] as? String == "Bobby Dun <bob@example.com>")
            #expect(link.contains("tempPassword="))
            // the app opens the link: the inviter's names for the account, its Yona password (as Yona's
            // CreateUserOnBuddyRequestTest reads it: exactly these properties), no confirmation yet
            let opened = try await server.request(.GET, link)
            #expect(opened.status == 200, "\(opened.text)")
            #expect(Set(opened.json.keys) == ["mobileNumber", "creationTime", "_links", "firstName", "lastName", "nickname", "yonaPassword"])
            #expect(opened.json["firstName"] as? String == "Bobby")
            #expect(opened.json["mobileNumber"] as? String == number)
            let shownPassword = try #require(opened.json["yonaPassword"] as? String)
            #expect(shownPassword.hasPrefix("AES:128:"))
            #expect(value(opened.json, "_links", "yona:confirmMobileNumber") == nil)
            #expect(!(value(opened.json, "_links", "self", "href") as? String ?? "tempPassword").contains("tempPassword"))
            let edit = try #require(value(opened.json, "_links", "edit", "href") as? String)
            // act: take over with the app's own names and device, through the edit link with the password shown
            let taken = try await server.request(.PUT, edit, headers: [("Yona-Password", shownPassword)], json: Self.takeOverBody(number: number))
            #expect(taken.status == 200, "\(taken.text)")
            #expect(taken.json["nickname"] as? String == "BD")
            let password = try #require(taken.json["yonaPassword"] as? String)
            #expect(password == shownPassword, "the account keeps the password its invitation showed")
            #expect(value(taken.json, "_links", "yona:confirmMobileNumber") != nil, "a taken-over number is confirmed like a new one")
            let bob = TestUser(
                id: String(URLComponents(string: link)!.path.split(separator: "/").last!), password: password,
                mobileNumber: number, firstName: "Bob", nickname: "BD")
            // the link no longer opens anything
            let reopened = try await server.request(.GET, link)
            #expect(reopened.errorCode == "error.decrypting.data", "as Yona")
            let unconfirmed = try await server.request(.GET, "\(bob.path)/messages/", headers: bob.passwordHeader)
            #expect(unconfirmed.errorCode == "error.mobile.number.not.confirmed")
            // act: confirm, find Richard's request, accept it
            let confirmed = try await server.request(.POST, "\(bob.path)/confirmMobileNumber", headers: bob.passwordHeader, json: ["code": "1234"])
            #expect(confirmed.status == 200, "\(confirmed.text)")
            #expect(value(confirmed.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "name") as? String == "My S8")
            #expect((value(confirmed.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any])?.count == 1, "the mandatory goal")
            let request = try #require(try await server.messages(bob).first { $0["@type"] as? String == "BuddyConnectRequestMessage" })
            #expect(request["message"] as? String == "Would you like to be my buddy?")
            let accept = try #require(value(request, "_links", "yona:accept", "href") as? String)
            let accepted = try await server.request(.POST, accept, headers: bob.passwordHeader, json: ["properties": ["message": "Yes"]])
            #expect(accepted.status == 200, "\(accepted.text)")
            // check: Richard has an accepted buddy under the invitee's own nickname, and his conflicts reach Bob without the URL
            let buddies = try await server.request(.GET, "\(richard.path)/buddies/", headers: richard.passwordHeader)
            #expect(value(buddies.json, "_embedded", "yona:buddies", 0, "sendingStatus") as? String == "ACCEPTED")
            #expect(value(buddies.json, "_embedded", "yona:buddies", 0, "_embedded", "yona:user", "nickname") as? String == "BD")
            try await server.addNoGoGoal(richard, category: GoalsTests.gambling)
            let login = try await server.vpnLogin(richard)
            let posted = try await server.postNetworkActivity(login.userAnonymizedID, categories: ["gambling"], url: "https://poker.example")
            #expect(posted.status == 204, "\(posted.text)")
            let conflict = try #require(try await server.messages(bob).first { $0["@type"] as? String == "GoalConflictMessage" })
            #expect(conflict["nickname"] as? String == "RQ")
            #expect(conflict.keys.contains("url") && conflict["url"] is NSNull)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theTemporaryPasswordOpensOnlyTheInvitedAccount(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let richard = try await server.createUser()
            let number = randomMobileNumber()
            let link = try await Self.invite(server, richard: richard, number: number)
            let components = URLComponents(string: link)!
            let inviteeID = String(components.path.split(separator: "/").last!)
            let temporaryPassword = try #require(components.queryItems?.first { $0.name == "tempPassword" }?.value)
            // act + check: a wrong temporary password
            let wrong = try await server.request(.GET, "/users/\(inviteeID)?requestingUserId=\(inviteeID)&tempPassword=hack")
            #expect(wrong.errorCode == "error.decrypting.data")
            let wrongPut = try await server.request(.PUT, "/users/\(inviteeID)?tempPassword=hack", json: Self.takeOverBody(number: number))
            #expect(wrongPut.errorCode == "error.decrypting.data")
            // an app that brings its own password to the take-over (Yona's old apps): refused before anything is opened
            let ownPasswordPut = try await server.request(
                .PUT, "/users/\(inviteeID)?tempPassword=\(temporaryPassword)", headers: [("Yona-Password", "chosen-by-the-app")],
                json: Self.takeOverBody(number: number))
            #expect(
                ownPasswordPut.status == 400 && ownPasswordPut.errorCode == "error.user.app.provided.password.not.supported", "\(ownPasswordPut.text)"
            )
            // a temporary password on a normal account
            let normal = try await server.request(.GET, "\(richard.profilePath)&tempPassword=\(temporaryPassword)")
            #expect(normal.errorCode == "error.decrypting.data", "as Yona: it opens nothing")
            // CreateUserOnBuddyRequestTest: Hacking attempt: Try to get / update a normal user with a temp password
            let ownPassword = try await server.request(.GET, "\(richard.profilePath)&tempPassword=\(richard.password)")
            #expect(ownPassword.errorCode == "error.user.not.created.on.buddy.request")
            let normalPut = try await server.request(
                .PUT, "\(richard.path)?tempPassword=hack",
                json: [
                    "firstName": "R", "lastName": "Q", "nickname": "RQ", "mobileNumber": richard.mobileNumber,
                ])
            #expect(normalPut.errorCode == "error.user.not.created.on.buddy.request")
            // the invitation link with another requesting user
            let other = try await server.request(.GET, "/users/\(inviteeID)?requestingUserId=\(richard.id)&tempPassword=\(temporaryPassword)")
            #expect(other.errorCode == "error.decrypting.data")
            // the invited account with a Yona-Password header instead
            let withHeader = try await server.request(
                .GET, "/users/\(inviteeID)?requestingUserId=\(inviteeID)",
                headers: [("Yona-Password", temporaryPassword)])
            #expect(withHeader.errorCode == "error.user.created.on.buddy.request")
            // registering the invited number the normal way
            let duplicate = try await server.request(
                .POST, "/users/",
                json: [
                    "firstName": "John", "lastName": "Doe", "nickname": "JD", "mobileNumber": number,
                ])
            #expect(duplicate.errorCode == "error.user.exists.created.on.buddy.request")
            // taking over with a number someone else has
            let taken = try await server.request(.PUT, link, json: Self.takeOverBody(number: richard.mobileNumber))
            #expect(taken.errorCode == "error.user.exists")
            // a bad e-mail address on an invitation
            let badMail = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": ["firstName": "A", "lastName": "B", "mobileNumber": randomMobileNumber(), "emailAddress": "not an address"]
                    ],
                    "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            #expect(badMail.errorCode == "error.user.email.address.invalid")
        }
    }

    @Test(arguments: TestDatabase.available)
    func onlyOneOfTwoParallelTakeOversWins(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let richard = try await server.createUser()
            let number = randomMobileNumber()
            let link = try await Self.invite(server, richard: richard, number: number)
            // act
            async let first = server.request(.PUT, link, json: Self.takeOverBody(number: number, deviceName: "First"))
            async let second = server.request(.PUT, link, json: Self.takeOverBody(number: number, deviceName: "Second"))
            let results = try await [first, second]
            // check: one password works, the other take-over was refused
            let winners = results.filter { $0.status == 200 }
            #expect(winners.count == 1, "\(results.map(\.text))")
            #expect(
                results.filter { $0.errorCode == "error.decrypting.data" || $0.errorCode == "error.user.not.created.on.buddy.request" }.count == 1)
            let winner = try #require(winners.first)
            let password = try #require(winner.json["yonaPassword"] as? String)
            let id = String(URLComponents(string: link)!.path.split(separator: "/").last!)
            let profile = try await server.request(.GET, "/users/\(id)?requestingUserId=\(id)", headers: [("Yona-Password", password)])
            #expect(profile.status == 200, "\(profile.text)")
        }
    }

    /// An invitation nobody takes over is withdrawn after 30 days: the account and its anonymized part go,
    /// and the inviter hears it on the next call. Younger and taken-over invitations stay.
    @Test(arguments: TestDatabase.available)
    func anInvitationNeverTakenOverIsWithdrawnAfterThirtyDays(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard invites two numbers; one of them takes the account over
            let richard = try await server.createUser()
            let ignored = randomMobileNumber()
            let taken = randomMobileNumber()
            _ = try await Self.invite(server, richard: richard, number: ignored)
            let link = try await Self.invite(server, richard: richard, number: taken)
            try #require(try await server.request(.PUT, link, json: Self.takeOverBody(number: taken)).status == 200)
            let stored = try #require(try await User.query(on: server.app.db).filter(\.$mobileNumber == ignored).first())
            #expect(stored.invitedOn == InvitationService.day(of: Date()))
            #expect(try await User.query(on: server.app.db).filter(\.$mobileNumber == taken).first()?.invitedOn == nil)
            let anonymizedBefore = try await UserAnonymized.query(on: server.app.db).count()

            // act and check: at 29 days nothing goes; at 31 days the ignored invitation does
            let recovery = server.app.yona.recovery
            #expect(
                try await InvitationService.purgeUnclaimed(on: server.app.db, recovery: recovery, now: Date().addingTimeInterval(29 * 86_400)) == 0)
            #expect(
                try await InvitationService.purgeUnclaimed(on: server.app.db, recovery: recovery, now: Date().addingTimeInterval(31 * 86_400)) == 1)
            #expect(try await User.query(on: server.app.db).filter(\.$mobileNumber == ignored).count() == 0)
            #expect(try await User.query(on: server.app.db).filter(\.$mobileNumber == taken).count() == 1)
            #expect(try await UserAnonymized.query(on: server.app.db).count() == anonymizedBefore - 1)
            // as Yona: an invitee gone before answering is a rejection, "User account was deleted"
            let rejection = try #require(try await server.messages(richard).first { $0["@type"] as? String == "BuddyConnectResponseMessage" })
            #expect(rejection["status"] as? String == "REJECTED")
            #expect(rejection["message"] as? String == "User account was deleted")
            let buddies = try await server.request(.GET, "\(richard.path)/buddies/", headers: richard.passwordHeader)
            let remaining = value(buddies.json, "_embedded", "yona:buddies") as? [[String: Any]] ?? []
            #expect(remaining.count == 1, "only the taken-over invitation is left")
            // the number can be invited again
            _ = try await Self.invite(server, richard: richard, number: ignored)
        }
    }

    /// issue 13, attack 4: invitations are no open SMS relay. One account firing invitations in parallel gets its
    /// day's allowance and 429s; many accounts inviting one number stop at that number's hourly allowance.
    @Test(arguments: TestDatabase.available)
    func invitationsAreNoOpenRelay(db: TestDatabase) async throws {
        try await withServer(
            db,
            adjust: {
                $0.buddyRequestsPerAccountPerDay = 5
                $0.rateLimitPerNumberPerHour = 3
            }
        ) { server in
            // (the day's and the hour's windows: an hour boundary is also where a day begins)
            try await RateLimitTests.inOneWindow(of: 3600) {
                let richard = try await server.createUser()
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<12 {
                        group.addTask {
                            try await server.request(
                                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                                json: [
                                    "_embedded": [
                                        "yona:user": [
                                            "firstName": "X", "lastName": "Y", "mobileNumber": randomMobileNumber(),
                                            "emailAddress": "x@example.com",
                                        ]
                                    ],
                                    "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                                ]
                            ).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 201 }.count == 5, "\(statuses.sorted())")
                #expect(statuses.filter { $0 == 429 }.count == 7)
                // one number, invited by account after account
                let target = randomMobileNumber()
                var answers: [Int] = []
                for _ in 0..<5 {
                    let inviter = try await server.createUser()
                    answers.append(
                        try await server.request(
                            .POST, "\(inviter.path)/buddies/", headers: inviter.passwordHeader,
                            json: [
                                "_embedded": [
                                    "yona:user": ["firstName": "X", "lastName": "Y", "mobileNumber": target, "emailAddress": "x@example.com"]
                                ],
                                "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                            ]
                        ).status)
                }
                #expect(answers.filter { $0 == 429 }.count >= 2, "the number's hourly allowance stops the rest: \(answers)")
            }
        }
    }
}
