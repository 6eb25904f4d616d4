import Foundation
import Testing
import Vapor

@testable import YonaAPI

/// `Request.queryValue` reads plain queries itself and must read every query as Vapor's form decoder does.
@Suite struct QueryValueTests {
    @Test func everyQueryReadsAsVaporsDecoderReadsIt() async throws {
        let app = try await Application.make(.testing)
        defer { Task { try? await app.asyncShutdown() } }
        let names = ["a", "b", "requestingUserId", "a[]", "c"]
        let pieces = ["a", "b", "requestingUserId", "=", "=", "&", "&", "+", "%20", "%2B", "%zz", "[", "]", "1", "x-y", "c"]
        var generator = SystemRandomNumberGenerator()
        var queries = [
            "", "a=1", "a=1&b=2", "a=1&a=2", "a=", "=1", "a", "a=b=c", "a=1&&b=2", "a=x+y", "a=%41", "a[]=1&a[]=2",
            "requestingUserId=6bd5a0b5-e3b5-4ac4-8c7a-6b9c4a9c3f0e&requestingDeviceId=1f088f0b-9952-4ac7-bdc0-fd242238bc1d",
        ]
        for _ in 0..<3_000 {
            queries.append((0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
        for query in queries {
            let request = Request(application: app, method: .GET, url: URI(string: "/x?\(query)"), on: app.eventLoopGroup.any())
            for name in names {
                #expect(request.queryValue(name) == request.query[String.self, at: name], "\(query) at \(name)")
            }
        }
        // What the apps send is read without the decoder.
        #expect(PlainQuery.pairs(queries[12])?.map(\.name) == ["requestingUserId", "requestingDeviceId"])
    }
}
