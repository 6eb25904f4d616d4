import FluentKit
import Foundation

/// Idempotency keys of analyzer posts already handled (stored as hashes), so a retried post is a no-op.
package final class ProcessedAnalyzerEvent: Model, @unchecked Sendable {
    package static let schema = "processed_analyzer_events"

    @ID(key: .id) package var id: UUID?
    @Field(key: "key_hash") package var keyHash: String
    @Field(key: "processed_at") package var processedAt: Date

    package init() {}

    package init(id: UUID, keyHash: String, processedAt: Date) {
        self.id = id
        self.keyHash = keyHash
        self.processedAt = processedAt
    }
}
