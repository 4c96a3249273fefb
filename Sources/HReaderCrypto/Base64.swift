import Foundation

extension Array where Element == UInt8 {
    var base64: String { Data(self).base64EncodedString() }

    init?(base64 string: String) {
        guard let data = Data(base64Encoded: string) else { return nil }
        self = Array(data)
    }
}
