import XCTest
final class PlaceholderStoreTests: XCTestCase { func testNothing() {} }
