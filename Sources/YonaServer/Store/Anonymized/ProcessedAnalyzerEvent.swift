import Fluent
import Foundation

/// Idempotency keys of analyzer posts already handled (stored as hashes), so a retried post is a no-op.
final class ProcessedAnalyzerEvent: Model, @unchecked Sendable {
    static let schema = "processed_analyzer_events"

    @ID(key: .id) var id: UUID?
    @Field(key: "key_hash") var keyHash: String
    @Field(key: "processed_at") var processedAt: Date

    init() {}

    init(id: UUID, keyHash: String, processedAt: Date) {
        self.id = id
        self.keyHash = keyHash
        self.processedAt = processedAt
    }
}
