import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// Lost-phone recovery (api.md "Admin API", "Users"): an SMS code, then a fresh confirmed account; the old
/// account's buddies are disconnected and its anonymized part is deleted.
@Suite struct OverwriteTests {
    static func requestCode(_ server: TestServer, _ number: String) async throws -> APIResponse {
        let encoded = number.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try await server.request(.POST, "/admin/requestUserOverwrite/?mobileNumber=\(encoded)")
    }

    static func overwrite(_ server: TestServer, _ number: String, code: String = "1234") async throws -> APIResponse {
        try await server.request(
            .POST, "/users/?overwriteUserConfirmationCode=\(code)",
            json: [
                "firstName": "Richard", "lastName": "Changed", "nickname": "RC", "mobileNumber": number,
            ])
    }

    /// Dates the number's last code request, as if it had been made then (a loaded test machine can take longer
    /// than the 30 s between two steps that a user takes within them).
    static func codeRequested(_ server: TestServer, _ number: String, at time: Date) async throws {
        let user = try #require(try await User.query(on: server.app.db).filter(\.$mobileNumber == number).first())
        user.overwriteRequestedAt = time
        try await user.save(on: server.app.db)
    }

    /// Yona's `Overwrite Richard after requesting a confirmation code for the second time`, as a user in a hurry does
    /// it: five requests at once text one code, and a wrong guess counted before another request stays counted.
    @Test(arguments: TestDatabase.available)
    func repeatedRequestsTextOneCodeAndKeepItsCount(db: TestDatabase) async throws {
        let gateway = try await SMSGatewayTests.Gateway()
        try await withServer(db, adjust: { $0.sms = .http(url: gateway.url, token: "sms-gateway-token", from: "Yona") }) { server in
            let richard = try await server.createUser()
            let textsBefore = gateway.texts(to: richard.mobileNumber).count
            // act
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<5 { group.addTask { try await Self.requestCode(server, richard.mobileNumber).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let wrong = try await Self.overwrite(server, richard.mobileNumber, code: "9999")
            try await Self.codeRequested(server, richard.mobileNumber, at: Date())
            #expect(try await Self.requestCode(server, richard.mobileNumber).status == 204)
            let wrongAgain = try await Self.overwrite(server, richard.mobileNumber, code: "9998")
            // check
            #expect(statuses == [204, 204, 204, 204, 204])
            #expect(gateway.texts(to: richard.mobileNumber).count == textsBefore + 1, "one code texted")
            #expect(wrong.json["remainingAttempts"] as? Int == 4)
            #expect(wrongAgain.json["remainingAttempts"] as? Int == 3, "the request within 30 s did not reset the count")
            #expect(try await Self.overwrite(server, richard.mobileNumber).status == 201)
        }
        await gateway.stop()
    }

    static func invite(_ server: TestServer, from: TestUser, to: TestUser) async throws {
        let invited = try await server.request(
            .POST, "\(from.path)/buddies/", headers: from.passwordHeader,
            json: [
                "_embedded": [
                    "yona:user": ["firstName": to.firstName, "lastName": "X", "mobileNumber": to.mobileNumber, "emailAddress": "buddy@example.com"]
                ],
                "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
            ])
        try #require(invited.status == 201, "\(invited.text)")
    }

    @Test(arguments: TestDatabase.available)
    func aNewPhoneReplacesTheAccountAndTheBuddiesAreDisconnected(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard with a phone, an accepted buddy (Bob), a request he sent (Carol) and one he got (Dave)
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ", extra: BuddyTests.phone("fiid-old-phone"))
            let bob = try await server.createUser(nickname: "Bobby")
            let carol = try await server.createUser()
            let dave = try await server.createUser()
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            try await Self.invite(server, from: richard, to: carol)
            try await Self.invite(server, from: dave, to: richard)
            _ = try await server.messages(richard)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let oldLogin = try await server.vpnLogin(richard)
            let bobLogin = try await server.vpnLogin(bob)
            let anonymizedBefore = try await UserAnonymized.query(on: server.app.db).count()

            // act: the lost-phone flow
            let requested = try await Self.requestCode(server, richard.mobileNumber)
            #expect(requested.status == 204, "\(requested.text)")
            let unknown = try await Self.requestCode(server, randomMobileNumber())
            #expect(unknown.status == 204, "an unknown number is answered the same way")
            let created = try await Self.overwrite(server, richard.mobileNumber)

            // check: a fresh, confirmed account with a new password and only the mandatory goal
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json["nickname"] as? String == "RC")
            let password = try #require(created.json["yonaPassword"] as? String)
            #expect(password != richard.password)
            #expect((value(created.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any])?.count == 1)
            #expect((value(created.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [Any] ?? []).isEmpty)
            let old = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            #expect(old.errorCode == "error.user.not.found.id")
            // the old anonymized part is gone: the classifier's old login is unknown, no row is left behind
            let oldVisit = try await server.postNetworkActivity(oldLogin.userAnonymizedID, categories: ["gambling"], url: "https://poker.example")
            #expect(oldVisit.errorCode == "error.user.not.found.id")
            #expect(try await UserAnonymized.query(on: server.app.db).count() == anonymizedBefore)
            #expect(try await DeviceAnonymized.query(on: server.app.db).filter(\.$firebaseInstanceID == "fiid-old-phone").count() == 0)
            // Bob's first call afterwards, a profile read, already leaves Richard out
            let bobsProfile = try await server.request(.GET, bob.profilePath, headers: bob.passwordHeader)
            #expect(bobsProfile.status == 200, "\(bobsProfile.text)")
            #expect(
                (value(bobsProfile.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [Any] ?? []).isEmpty, "\(bobsProfile.text)")
            // the accepted buddy hears USER_ACCOUNT_DELETED and stops sharing
            let bobsMessages = try await server.messages(bob)
            let disconnect = try #require(bobsMessages.first { $0["@type"] as? String == "BuddyDisconnectMessage" })
            #expect(disconnect["reason"] as? String == "USER_ACCOUNT_DELETED")
            #expect(disconnect["nickname"] as? String == "RQ")
            let bobsBuddies = try await server.request(.GET, "\(bob.path)/buddies/", headers: bob.passwordHeader)
            #expect(
                value(bobsBuddies.json, "_embedded", "yona:buddies") == nil
                    || (value(bobsBuddies.json, "_embedded", "yona:buddies") as? [Any])?.isEmpty == true)
            let posted = try await server.postNetworkActivity(bobLogin.userAnonymizedID, categories: ["gambling"], url: "https://poker.example")
            #expect(posted.status == 204)
            let richardNow = TestUser(
                id: String(URLComponents(string: value(created.json, "_links", "self", "href") as! String)!.path.split(separator: "/").last!),
                password: password, mobileNumber: richard.mobileNumber, firstName: "Richard", nickname: "RC")
            #expect(try await server.messages(richardNow).isEmpty, "the new account inherits nothing and gets no conflict of Bob")
            // a request Richard sent is withdrawn from Carol's inbox (as Yona)
            #expect(try await server.messages(carol).first { $0["@type"] as? String == "BuddyConnectRequestMessage" } == nil)
            // the request Dave sent to the old account ends, on Dave's next call (a profile read), as Yona's rejection
            let davesProfile = try await server.request(.GET, dave.profilePath, headers: dave.passwordHeader)
            #expect(
                (value(davesProfile.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [Any] ?? []).isEmpty, "\(davesProfile.text)")
            let davesMessages = try await server.messages(dave)
            let rejection = try #require(davesMessages.first { $0["@type"] as? String == "BuddyConnectResponseMessage" })
            #expect(rejection["status"] as? String == "REJECTED")
            #expect(rejection["message"] as? String == "User account was deleted")
            #expect(rejection["nickname"] as? String == "Richard X", "the names Dave typed, as Yona's temporary nickname")
            let davesBuddies = try await server.request(.GET, "\(dave.path)/buddies/", headers: dave.passwordHeader)
            #expect((value(davesBuddies.json, "_embedded", "yona:buddies") as? [Any] ?? []).isEmpty)
            // the code was used up
            #expect(try await Self.overwrite(server, richard.mobileNumber).errorCode == "error.user.overwrite.confirmation.code.not.set")
        }
    }

    @Test(arguments: TestDatabase.available)
    func guessingTheCodeIsStopped(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let richard = try await server.createUser()
            #expect(try await Self.overwrite(server, richard.mobileNumber).errorCode == "error.user.overwrite.confirmation.code.not.set")
            #expect(try await Self.requestCode(server, richard.mobileNumber).status == 204)
            // act: five wrong guesses count down, then even the right code is refused
            for remaining in (0..<5).reversed() {
                let wrong = try await Self.overwrite(server, richard.mobileNumber, code: "9999")
                #expect(wrong.errorCode == "error.user.overwrite.confirmation.code.mismatch")
                #expect(wrong.json["remainingAttempts"] as? Int == remaining)
            }
            let locked = try await Self.overwrite(server, richard.mobileNumber)
            #expect(locked.errorCode == "error.user.overwrite.confirmation.code.too.many.failed.attempts")
            // check: the account is untouched; asking again within 30 s keeps the spent code (Yona's non-resend
            // interval: no fresh guesses for the asking), and a new code after that starts again
            #expect(try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader).status == 200)
            try await Self.codeRequested(server, richard.mobileNumber, at: Date())
            #expect(try await Self.requestCode(server, richard.mobileNumber).status == 204)
            #expect(
                try await Self.overwrite(server, richard.mobileNumber).errorCode == "error.user.overwrite.confirmation.code.too.many.failed.attempts")
            try await Self.codeRequested(server, richard.mobileNumber, at: Date().addingTimeInterval(-OverwriteService.resendInterval - 1))
            #expect(try await Self.requestCode(server, richard.mobileNumber).status == 204)
            #expect(try await Self.overwrite(server, richard.mobileNumber).status == 201)
        }
    }

    @Test(arguments: TestDatabase.available)
    func parallelGuessesGetNoMoreThanFiveTries(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            #expect(try await Self.requestCode(server, richard.mobileNumber).status == 204)
            let results = try await withThrowingTaskGroup(of: String?.self) { group in
                for guess in 0..<12 {
                    group.addTask { try await Self.overwrite(server, richard.mobileNumber, code: String(format: "%04d", 5000 + guess)).errorCode }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(results.filter { $0 == "error.user.overwrite.confirmation.code.mismatch" }.count == 5, "\(results)")
            #expect(results.filter { $0 == "error.user.overwrite.confirmation.code.too.many.failed.attempts" }.count == 7, "\(results)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func requestsForOneNumberAreRateLimited(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.rateLimitPerNumberPerHour = 3 }) { server in
            try await RateLimitTests.inOneWindow(of: 3600) {
                let number = randomMobileNumber()
                var statuses: [Int] = []
                for _ in 0..<5 { statuses.append(try await Self.requestCode(server, number).status) }
                #expect(statuses == [204, 204, 204, 429, 429])
                let malformed = try await Self.requestCode(server, "0612345678")
                #expect(malformed.errorCode == "error.user.mobile.number.invalid")
                let missing = try await server.request(.POST, "/admin/requestUserOverwrite/")
                #expect(missing.errorCode == "error.request.missing.request.parameter")
            }
        }
    }
}
