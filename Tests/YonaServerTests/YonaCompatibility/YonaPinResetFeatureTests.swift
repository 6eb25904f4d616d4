import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer

/// Yona's `PinResetRequestTest.groovy`: forgetting the app's PIN, with Yona's links, delay, codes and lockout.
@Suite struct YonaPinResetFeatureTests {
    static let pinResetLinks: Set<String> = [
        "yona:requestPinReset", "yona:verifyPinReset", "yona:resendPinResetConfirmationCode", "yona:clearPinReset",
    ]

    /// The pin-reset links the profile offers now.
    static func links(_ app: YonaApp) async throws -> Set<String> {
        Set(try await app.reload().json["_links"].flatMap { ($0 as? [String: Any])?.keys.map { $0 } } ?? []).intersection(pinResetLinks)
    }

    static func post(_ server: TestServer, _ app: YonaApp, _ action: String, _ body: [String: Any] = [:]) async throws -> APIResponse {
        let base = YonaAssertions.stripped(app.url)!
        return try await server.request(.POST, "\(base)/pinResetRequest/\(action)", headers: app.headers + [("Accept-Language", "nl-NL")], json: body)
    }

    /// How long the code takes here: a minute where a test looks at the wait, none where it looks at what follows
    /// (Yona's test servers wait 10 s and its tests sleep through them).
    static func delay(_ seconds: TimeInterval) -> (inout AppConfig) -> Void { { $0.pinResetDelay = seconds } }

    @Test(arguments: TestDatabase.available)
    func pinResetRequestTestCannotVerifyOrResendBeforeRequestingOrBeforeTheDelay(db: TestDatabase) async throws {
        try await withServer(db, adjust: Self.delay(60)) { server in
            // 'Cannot verify or clear pin reset request before requesting a pin reset'
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            #expect(try await Self.links(richard) == ["yona:requestPinReset"])
            #expect(try await Self.post(server, richard, "resend").errorCode == "error.pin.reset.request.confirmation.code.not.set")
            #expect(try await Self.post(server, richard, "verify", ["code": "1234"]).errorCode == "error.pin.reset.request.confirmation.code.not.set")

            // 'Request pin reset': the delay, and no links while the code is on the way
            let requested = try await server.request(.POST, try #require(richard.link("yona:requestPinReset")), headers: richard.headers, json: [:])
            #expect(requested.status == 200 && requested.json["delay"] as? String == "PT1M", "\(requested.text)")
            #expect(try await Self.links(richard).isEmpty)
            // 'Hacking attempt: Try to verify pin reset confirmation code before end of delay period' (and resend)
            let early = try await Self.post(server, richard, "verify", ["code": "1234"])
            #expect(early.status == 400 && early.errorCode == "error.pin.reset.request.confirmation.code.mismatch")
            #expect(try await Self.post(server, richard, "resend").errorCode == "error.pin.reset.request.confirmation.code.not.set")
        }
    }

    @Test(arguments: TestDatabase.available)
    func pinResetRequestTestRequestVerifyResendAndClear(db: TestDatabase) async throws {
        try await withServer(db, adjust: Self.delay(0)) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            #expect(try await Self.post(server, richard, "request").status == 200)
            let ready = try await richard.reload()
            let base = YonaAssertions.stripped(richard.url)!
            #expect(ready.link("yona:verifyPinReset") == "\(base)/pinResetRequest/verify")
            #expect(ready.link("yona:clearPinReset") == "\(base)/pinResetRequest/clear")
            #expect(ready.link("yona:resendPinResetConfirmationCode") == "\(base)/pinResetRequest/resend")
            #expect(ready.link("yona:requestPinReset") == nil)

            // 'Verify pin reset confirmation code', then 'Request resend …' and 'Clear pin reset request after verification'
            #expect(try await Self.post(server, richard, "verify", ["code": "1234"]).status == 204)
            #expect(try await Self.links(richard) == ["yona:verifyPinReset", "yona:resendPinResetConfirmationCode", "yona:clearPinReset"])
            #expect(try await Self.post(server, richard, "resend").status == 204)
            #expect(try await Self.post(server, richard, "clear").status == 204)
            #expect(try await Self.links(richard) == ["yona:requestPinReset"])
            #expect(try await Self.post(server, richard, "verify", ["code": "1234"]).errorCode == "error.pin.reset.request.confirmation.code.not.set")
        }
    }

    /// 'Hacking attempt: Brute force try verify pin reset request', also as the parallel attack of issue 13.
    @Test(arguments: TestDatabase.available)
    func pinResetRequestTestBruteForceIsLockedOutUnderParallelGuesses(db: TestDatabase) async throws {
        try await withServer(db, adjust: Self.delay(0)) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            #expect(try await Self.post(server, richard, "request").status == 200)
            // sequentially, as Yona's test: 4, 3, 2, 1, 0 left, then locked, also for the right code
            for left in (0..<5).reversed() {
                let wrong = try await Self.post(server, richard, "verify", ["code": "0000"])
                #expect(wrong.errorCode == "error.pin.reset.request.confirmation.code.mismatch" && wrong.json["remainingAttempts"] as? Int == left)
            }
            let locked = try await Self.post(server, richard, "verify", ["code": "0000"])
            #expect(
                locked.errorCode == "error.pin.reset.request.confirmation.code.too.many.failed.attempts" && locked.json["remainingAttempts"] == nil)
            #expect(
                try await Self.post(server, richard, "verify", ["code": "1234"]).errorCode
                    == "error.pin.reset.request.confirmation.code.too.many.failed.attempts")

            // in parallel after a fresh request: twenty wrong guesses with the right code among them get five tries in all
            #expect(try await Self.post(server, richard, "clear").status == 204)
            #expect(try await Self.post(server, richard, "request").status == 200)
            let codes = (0..<20).map { _ in "0000" } + ["1234"]
            let (verify, headers) = ("\(YonaAssertions.stripped(richard.url)!)/pinResetRequest/verify", richard.headers)
            let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                for code in codes { group.addTask { try await server.request(.POST, verify, headers: headers, json: ["code": code]).errorCode } }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(answers.filter { $0 == "error.pin.reset.request.confirmation.code.mismatch" || $0 == nil }.count <= 5, "\(answers)")
            #expect(answers.filter { $0 == "error.pin.reset.request.confirmation.code.too.many.failed.attempts" }.count >= 16)
        }
    }

    @Test(arguments: TestDatabase.available)
    func pinResetRequestTestTheCodeIsTextedAfterTheDelayAndResendsRunInParallel(db: TestDatabase) async throws {
        let gateway = try await SMSGatewayTests.Gateway()
        try await withServer(
            db,
            adjust: { config in
                Self.delay(3)(&config)
                config.sms = .http(url: gateway.url, token: nil, from: "Yona")
                config.push.workersEnabled = true
            }
        ) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let number = try #require(richard.json["mobileNumber"] as? String)
            let requested = Date()
            #expect(try await Self.post(server, richard, "request").status == 200)
            func pinTexts() -> [SMSGatewayTests.Gateway.Received] {
                gateway.texts(to: number).filter { $0.body["text"]?.contains("pincode") == true }
            }
            for _ in 0..<100 where pinTexts().isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            // not before the delay, by when the gateway got it (whatever the request's own answer took on a busy
            // machine), and in the language of the request (Dutch here, as the Groovy tests send)
            #expect(pinTexts().allSatisfy { $0.at >= requested.addingTimeInterval(3) }, "not before the delay")
            #expect(pinTexts().map { $0.body["text"] } == ["Je Yona-code om je pincode opnieuw in te stellen: 1234"])
            // 'Concurrent resend requests cause no errors'
            let (resend, headers) = ("\(YonaAssertions.stripped(richard.url)!)/pinResetRequest/resend", richard.headers)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<5 { group.addTask { try await server.request(.POST, resend, headers: headers, json: [:] as [String: Any]).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == [204, 204, 204, 204, 204])
        }
        await gateway.stop()
    }

    @Test(arguments: TestDatabase.available)
    func pinResetRequestTestATestServerWaitsTenSecondsAsYonas(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let requested = try await Self.post(server, richard, "request")
            #expect(requested.status == 200 && requested.json["delay"] as? String == "PT10S")
            #expect(PinResetController.isoDuration(86_400) == "PT24H" && PinResetController.isoDuration(90) == "PT1M30S")
        }
    }
}
