import FluentKit
import Foundation

/// Time a device spent on a goal's category. No URL and nothing personal: the visited URL exists only
/// inside the sealed goal-conflict message.
package final class Activity: Model, @unchecked Sendable {
    package static let schema = "activities"
    /// `app_tag` of network activity, which has no app (an app's tag is `ActivityApp.tag`).
    package static let networkAppTag = ""

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    @Field(key: "start_time") package var startTime: Date
    @Field(key: "end_time") package var endTime: Date

    // relationships
    @Parent(key: "user_anonymized_id") package var userAnonymized: UserAnonymized
    /// Nil once the device was removed (its activities stay).
    @OptionalParent(key: "device_anonymized_id") package var device: DeviceAnonymized?
    @Parent(key: "goal_id") package var goal: Goal

    package init() {}

    package init(id: UUID, userAnonymizedID: UUID, deviceID: UUID, goalID: UUID, startTime: Date, endTime: Date) {
        self.id = id
        self.$userAnonymized.id = userAnonymizedID
        self.$device.id = deviceID
        self.$goal.id = goalID
        self.startTime = startTime
        self.endTime = endTime
    }
}
