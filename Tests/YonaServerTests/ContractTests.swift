import Foundation
import SQLiteNIO
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

/// api.md "Conventions" and the request-level rows of "Errors": bad input is a 4xx with a body, never a 500.
@Suite struct ContractTests {
    @Test func malformedBodiesGetClearErrors() async throws {
        try await withServer(.sqlite) { server in
            let cases: [(String, Data, String?, Int, String)] = [
                ("not JSON", Data("{nope".utf8), "application/json", 400, "error.request.invalid.json"),
                ("JSON array", Data("[1,2]".utf8), "application/json", 400, "error.request.invalid.json"),
                // an empty body is an empty object (the Android app posts some actions without one)
                ("empty body", Data(), "application/json", 400, "error.user.firstname"),
                ("not JSON media type", Data("firstName=a".utf8), "application/x-www-form-urlencoded", 415, "error.request.unsupported.media.type"),
                ("no media type", Data("{}".utf8), nil, 415, "error.request.unsupported.media.type"),
                (
                    "too large", Data(("{\"firstName\":\"" + String(repeating: "a", count: 70_000) + "\"}").utf8), "application/json", 413,
                    "error.request.too.large"
                ),
            ]
            for (name, body, contentType, status, code) in cases {
                let response = try await server.request(.POST, "/users/", body: body, contentType: contentType)
                #expect(response.status == status, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
                #expect(response.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true, "\(name)")
            }
        }
    }

    /// SQLite lock contention is a retryable 503 with `Retry-After`, never a 500 (the transaction rolled back).
    @Test func sqliteLockContentionIsRetryableNotUnexpected() {
        for reason: SQLiteError.Reason in [.busy, .busyInSnapshot, .busyTimeout, .locked] {
            #expect(ErrorMapping.isContention(reason), "\(reason)")
        }
        for reason: SQLiteError.Reason in [.constraint, .error, .corrupt, .full] {
            #expect(!ErrorMapping.isContention(reason), "\(reason)")
        }
        #expect(ErrorCode.serviceUnavailable.status == .serviceUnavailable)
    }

    @Test func unknownPathsAndWrongMethods() async throws {
        try await withServer(.sqlite) { server in
            let unknown = try await server.request(.GET, "/nothing/here")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "error.request.unknown.path")
            let wrongMethod = try await server.request(.PATCH, "/users/\(UUID())")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.errorCode == "error.request.method.not.allowed")
            let wrongMethodOnCollection = try await server.request(.GET, "/users/")
            #expect(wrongMethodOnCollection.status == 405)
        }
    }

    @Test func appVersionHeaderIsChecked() async throws {
        try await withServer(.sqlite) { server in
            // Yona's three codes (DeviceTest "Use different app version headers")
            let cases = [
                ("ANDROID", "error.request.with.invalid.app.version.header"), ("IOS/1/", "error.request.with.invalid.app.version.header"),
                ("IOS/1/1.0/extra", "error.request.with.invalid.app.version.header"), ("", "error.request.with.invalid.app.version.header"),
                ("WINDOWS/1/1.0", "error.device.unknown.operating.system"),
                ("IOS/x/1.0", "error.request.with.invalid.version.code"), ("IOS/-1/1.0", "error.request.with.invalid.version.code"),
                ("ANDROID/0/1.0", "error.request.with.invalid.version.code"),
            ]
            for (bad, code) in cases {
                let response = try await server.request(.GET, "/health", headers: [("Yona-App-Version", bad)])
                #expect(response.status == 400, "\(bad)")
                #expect(response.errorCode == code, "\(bad)")
            }
            for name in ["1.2 build 360", "1.2 (I'm Rich)"] {
                let spaced = try await server.request(.GET, "/health", headers: [("Yona-App-Version", "ANDROID/123/\(name)")])
                #expect(spaced.status == 200, "names are free text: \(name)")
            }
            let good = try await server.request(.GET, "/health", headers: [("Yona-App-Version", "IOS/123/1.2.3")])
            #expect(good.status == 200)
        }
    }

    @Test func correlationIDAndLocaleAreOnEveryResponse() async throws {
        try await withServer(.sqlite) { server in
            let traced = try await server.request(
                .GET, "/nothing", headers: [("x-b3-traceid", "80f198ee56343ba864fe8b2a57d3eff7"), ("Accept-Language", "nl-NL,en;q=0.5")])
            #expect(traced.headers.first(name: "X-Correlation-Id") == "80f198ee56343ba864fe8b2a57d3eff7")
            #expect(traced.json["correlationId"] as? String == "80f198ee56343ba864fe8b2a57d3eff7")
            #expect(traced.headers.first(name: "Content-Language") == "nl-NL")
            #expect(traced.json["message"] as? String == ErrorCode.unknownPath.message(in: .nlNL))
            let plain = try await server.request(.GET, "/health", headers: [("Accept-Language", "fr-FR")])
            #expect(plain.headers.first(name: "Content-Language") == "en-US")
            // without one, a random UUID as Yona's (LocalizationTest matches it against a UUID pattern)
            #expect(
                (plain.headers.first(name: "X-Correlation-Id") ?? "").wholeMatch(
                    of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil)
        }
    }

    @Test func correlationIDsAreDistinctVersion4UUIDs() async throws {
        // setup: more ids than one refill of the pool holds, drawn from parallel tasks as requests draw them
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<300).map { _ in CorrelationIDs.next() } } }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        // check
        #expect(Set(ids).count == ids.count, "an id came twice")
        for id in ids {
            #expect(id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil, "\(id)")
        }
    }

    @Test func accessLineDurationsAreMillisecondsWithOneDecimal() {
        #expect(AccessLog.milliseconds(.zero) == "0.0")
        #expect(AccessLog.milliseconds(.microseconds(1_249)) == "1.2")
        #expect(AccessLog.milliseconds(.microseconds(1_250)) == "1.3")
        #expect(AccessLog.milliseconds(.seconds(12) + .microseconds(345_960)) == "12346.0")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let nanoseconds = Int64.random(in: 0..<100_000_000_000, using: &generator)
            // printf rounds the binary value it is given; away from a tie both agree
            guard nanoseconds % 100_000 != 50_000 else { continue }
            let expected = String(format: "%.1f", Double(nanoseconds) / 1e6)
            #expect(AccessLog.milliseconds(.nanoseconds(nanoseconds)) == expected, "\(nanoseconds) ns")
        }
    }

    @Test(arguments: TestDatabase.available)
    func healthAndReadiness(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let health = try await server.request(.GET, "/health")
            #expect(health.status == 200)
            #expect(health.text == #"{"status":"UP"}"#)
            #expect(health.headers.first(name: "Content-Type") == "application/json; charset=utf-8")
            let ready = try await server.request(.GET, "/ready")
            #expect(ready.status == 200)
            #expect(ready.json["status"] as? String == "UP")
        }
    }
}

@Suite struct WireFormatTests {
    @Test func timestampsUseTheYonaFormatInUTC() {
        let date = Date(timeIntervalSince1970: 1_771_882_138.5565) // milliseconds are truncated, as Java does
        #expect(YonaDateFormat.timestamp(date) == "2026-02-23T21:28:58.556+0000")
        #expect(YonaDateFormat.day(date) == "2026-02-23")
    }

    @Test func localeFollowsAcceptLanguage() {
        #expect(YonaLocale.pick(acceptLanguage: nil) == .enUS)
        #expect(YonaLocale.pick(acceptLanguage: "nl") == .nlNL)
        #expect(YonaLocale.pick(acceptLanguage: "fr-FR, nl-NL;q=0.8, en-US;q=0.9") == .enUS)
        #expect(YonaLocale.pick(acceptLanguage: "de-DE") == .enUS)
        #expect(YonaLocale.pick(acceptLanguage: "en-US;q=0, nl-NL;q=0.1") == .nlNL)
    }

    @Test func everyErrorCodeHasTwoDistinctTexts() {
        for code in ErrorCode.allCases {
            #expect(!code.message(in: .enUS).isEmpty)
            #expect(code.message(in: .enUS) != code.message(in: .nlNL), "\(code)")
        }
    }

    @Test func errorSchemaRefusesBodiesOutsideTheContract() throws {
        let schema = try JSONSchema.load("error.schema.json")
        #expect(schema.violations(of: Data(#"{"code":"error.user.exists","message":"m","correlationId":"ab12"}"#.utf8)).isEmpty)
        #expect(!schema.violations(of: Data(#"{"message":"m","correlationId":"ab12"}"#.utf8)).isEmpty)
        #expect(!schema.violations(of: Data(#"{"code":"error.x","message":"m","correlationId":"ab12","stack":"..."}"#.utf8)).isEmpty)
        #expect(!schema.violations(of: Data(#"{"code":"oops","message":"m","correlationId":"ab12"}"#.utf8)).isEmpty)
        #expect(!schema.violations(of: Data(#"{"code":"error.x","message":"m","correlationId":"ab12","remainingAttempts":true}"#.utf8)).isEmpty)
    }

    @Test func mobileNumberRules() throws {
        for good in ["+31612345678", "+14155550123", "+35312345678", "+447911123456"] {
            #expect(throws: Never.self) { try MobileNumber(good) }
        }
        for bad in ["0612345678", "+31", "+3161234567890123", "+31 612345678", "+0123456789"] {
            #expect(throws: YonaError(.invalidMobileNumber, quoting: bad)) { try MobileNumber(bad) }
        }
        // Yona's own codes: a trunk zero after the country code, and a Dutch landline (UserValidationTest)
        for bad in ["+310612345678", "+4407911123456"] {
            #expect(throws: YonaError(.mobileNumberLeadingZero, quoting: bad)) { try MobileNumber(bad) }
        }
        #expect(throws: YonaError(.mobileNumberNotMobile, quoting: "+31356474747")) { try MobileNumber("+31356474747") }
        #expect(try MobileNumber("+31612345678").description == "MobileNumber(redacted)")
    }
}
