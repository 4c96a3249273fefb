import FITWriter
import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import XCTest

/// The FIT decoder and mapping, over files the tests write with `FITWriter` (never a third party's).
final class FITDecoderTests: XCTestCase {
    let start = FITWriter.time("2026-03-01T07:00:00Z")
    let utc = TimeZone(identifier: "UTC")!

    func testDecodesDefinitionsDataCompressedTimestampsAndSkipsDeveloperFields() throws {
        let bytes = FITExamples.activity(start: start, heartRates: (0..<50).map { UInt8(100 + $0) })
        let messages = try FITDecoder.decode(bytes)
        let records = messages.filter { $0.global == FITProfile.Message.record }
        XCTAssertEqual(records.count, 50)
        XCTAssertEqual(records.map { $0.timestamp }, (0..<50).map { start + UInt32($0) }, "full and compressed timestamps")
        XCTAssertEqual(records.map { $0.value(FITProfile.Record.heartRate) }, (0..<50).map { Double(100 + $0) },
                       "the developer field's bytes did not shift the next message")
        XCTAssertEqual(messages.first { $0.global == FITProfile.Message.deviceInfo }?.text(FITProfile.DeviceInfo.productName), "Forerunner 965")
    }

    func testBigEndianFilesReadTheSame() throws {
        let little = try FITMapper(zone: .named(utc)).map(FITExamples.activity(start: start, heartRates: [90, 91, 92]), name: "a.fit")
        let big = try FITMapper(zone: .named(utc)).map(FITExamples.activity(start: start, heartRates: [90, 91, 92], bigEndian: true), name: "b.fit")
        XCTAssertEqual(big.samples.map(\.attributes.description), little.samples.map(\.attributes.description))
        XCTAssertEqual(big.samples.count, 4, "three heart rates and the HRV")
    }

    func testInvalidValuesAreAbsentNotZero() throws {
        var fit = FITWriter()
        fit.define(local: 0, global: 20, fields: [(253, 4, FITExamples.uint32), (3, 1, FITExamples.uint8), (0, 4, FITExamples.sint32)])
        fit.data(local: 0, [.uint(UInt64(start)), .uint(0xFF), .uint(0x7FFF_FFFF)])
        fit.data(local: 0, [.uint(UInt64(start + 1)), .uint(64), .int(-5)])
        let messages = try FITDecoder.decode(fit.file())
        XCTAssertNil(messages[0].value(3))
        XCTAssertNil(messages[0].value(0))
        XCTAssertEqual(messages[1].value(3), 64)
        XCTAssertEqual(messages[1].value(0), -5)
        let readings = try FITMapper(zone: .named(utc)).map(fit.file(), name: "x.fit")
        XCTAssertEqual(readings.samples.map(\.value), [.real(64)], "the invalid heart rate is no reading")
    }

    func testCRCIsTheProtocols() {
        // The check value of CRC-16/ARC (the FIT CRC): "123456789" → 0xBB3D.
        XCTAssertEqual(FITDecoder.crc(Array("123456789".utf8)), 0xBB3D)
        XCTAssertEqual(FITWriter.crc(Array("123456789".utf8)), 0xBB3D)
    }

    func testDamagedFilesAreOneClearError() {
        var fit = FITWriter()
        fit.define(local: 0, global: 20, fields: [(253, 4, FITExamples.uint32), (3, 1, FITExamples.uint8)])
        fit.data(local: 0, [.uint(UInt64(start)), .uint(70)])
        let good = fit.file()
        XCTAssertNoThrow(try FITDecoder.decode(good))

        func failure(_ bytes: [UInt8]) -> String {
            do { _ = try FITDecoder.decode(bytes); return "decoded" } catch { return "\(error)" }
        }
        XCTAssertTrue(failure(fit.file(statedDataSize: 5000)).contains("the header states 5000 bytes"), failure(fit.file(statedDataSize: 5000)))
        XCTAssertTrue(failure(Array(good.dropLast(3))).contains("truncated"), failure(Array(good.dropLast(3))))
        var flipped = good
        flipped[20] ^= 0x01
        XCTAssertTrue(failure(flipped).contains("CRC does not match"), failure(flipped))
        var header = good
        header[3] ^= 0x01   // the profile version: only the header's CRC catches it
        XCTAssertTrue(failure(header).contains("header's CRC"), failure(header))
        XCTAssertTrue(failure(Array("not a fit file at all".utf8)).contains("not a FIT file"))
        // A data message before its definition.
        var undefined = FITWriter()
        undefined.raw([0x03, 0x01])
        XCTAssertTrue(failure(undefined.file()).contains("local type 3"), failure(undefined.file()))
        // A compressed timestamp with no time before it.
        var early = FITWriter()
        early.define(local: 0, global: 20, fields: [(3, 1, FITExamples.uint8)])
        early.compressed(local: 0, timeOffset: 3, [.uint(70)])
        XCTAssertTrue(failure(early.file()).contains("compressed timestamp before"), failure(early.file()))
        // A header CRC of 0 and a file CRC of 0 mean "not computed".
        var uncomputed = fit
        uncomputed.headerCRC = false
        XCTAssertNoThrow(try FITDecoder.decode(uncomputed.file(fileCRC: 0)))
    }

    func testChainedFilesAreReadInTurn() throws {
        let a = FITExamples.activity(start: start, heartRates: [80, 81], offsetMinutes: nil)
        let b = FITExamples.activity(start: start + 3600, heartRates: [82], offsetMinutes: nil)
        XCTAssertEqual(try FITDecoder.decode(a + b).filter { $0.global == FITProfile.Message.record }.count, 3)
        XCTAssertThrowsError(try FITDecoder.decode(a + [0x0E, 0x20]), "stray bytes after a file")
    }

    func testActivityBecomesHeartRatesASessionAndHRVAtTheStatedOffset() throws {
        let readings = try FITMapper(zone: .named(utc)).map(FITExamples.activity(start: start, heartRates: [120, 130, 140]), name: "run.fit")
        let heart = readings.samples.filter { $0.type == "HKQuantityTypeIdentifierHeartRate" }
        XCTAssertEqual(heart.map(\.value), [.real(120), .real(130), .real(140)])
        XCTAssertEqual(heart[0].attribute("startDate"), "2026-03-01 08:00:00 +0100", "UTC 07:00 at the file's stated +01:00")
        XCTAssertEqual(heart[0].attribute("unit"), "count/min")
        XCTAssertEqual(heart[0].sourceName, "Garmin Forerunner 965")
        XCTAssertEqual(heart[0].device, "serial 3987654321")
        XCTAssertEqual(heart[0].sourceVersion, "19.12")
        let hrv = try XCTUnwrap(readings.samples.first { $0.type == "HKQuantityTypeIdentifierHeartRateVariabilitySDNN" })
        // SDNN of 800, 820, 790, 810, 805, 795, 815 ms (sample standard deviation).
        XCTAssertEqual(hrv.value, .real(10.8))
        XCTAssertEqual(readings.entries.count, 1)
        let session = readings.entries[0].content
        XCTAssertEqual(session.description, "Running workout")
        XCTAssertEqual(session.start?.text, "2026-03-01T08:00:00+01:00")
        XCTAssertEqual(session.valueText, "5 km, 320 kcal, average heart rate 130/min, 1 lap")
        XCTAssertEqual(readings.unmapped, ["message 65280": 1])
        XCTAssertTrue(readings.notes.isEmpty)
    }

    func testAFileWithoutAnOffsetIsPlacedInTheLocalZone() throws {
        let zone = TimeZone(identifier: "America/New_York")!
        let readings = try FITMapper(zone: .named(zone)).map(FITExamples.activity(start: start, heartRates: [70], offsetMinutes: nil), name: "x.fit")
        XCTAssertEqual(readings.samples[0].attribute("startDate"), "2026-03-01 02:00:00 -0500")
        XCTAssertEqual(readings.notes, ["x.fit states no local time: its times were placed in America/New_York"])
    }

    /// A night across the end of summer time: the file states +02:00 and then +01:00
    /// (`timestamp_correlation`); each reading takes the offset stated at or before it. Without a
    /// statement, the local zone's offset at each instant.
    func testADaylightSavingChangeInsideAFileKeepsBothOffsets() throws {
        let before = FITWriter.time("2026-10-25T00:30:00Z"), change = FITWriter.time("2026-10-25T01:00:00Z")
        var fit = FITWriter()
        fit.define(local: 0, global: 162, fields: [(253, 4, FITExamples.uint32), (3, 4, FITExamples.uint32)])
        fit.define(local: 1, global: 20, fields: [(253, 4, FITExamples.uint32), (3, 1, FITExamples.uint8)])
        fit.data(local: 0, [.uint(UInt64(before)), .uint(UInt64(before + 7200))])
        fit.data(local: 1, [.uint(UInt64(before)), .uint(50)])
        fit.data(local: 0, [.uint(UInt64(change)), .uint(UInt64(change + 3600))])
        fit.data(local: 1, [.uint(UInt64(change + 1800)), .uint(52)])
        let stated = try FITMapper(zone: .named(utc)).map(fit.file(), name: "night.fit").samples.map { $0.attribute("startDate") }
        XCTAssertEqual(stated, ["2026-10-25 02:30:00 +0200", "2026-10-25 02:30:00 +0100"])

        var plain = FITWriter()
        plain.define(local: 1, global: 20, fields: [(253, 4, FITExamples.uint32), (3, 1, FITExamples.uint8)])
        plain.data(local: 1, [.uint(UInt64(before)), .uint(50)])
        plain.data(local: 1, [.uint(UInt64(change + 1800)), .uint(52)])
        let paris = try FITMapper(zone: .named(TimeZone(identifier: "Europe/Paris")!)).map(plain.file(), name: "night.fit")
        XCTAssertEqual(paris.samples.map { $0.attribute("startDate") }, ["2026-10-25 02:30:00 +0200", "2026-10-25 02:30:00 +0100"])
    }

    func testMonitoringTotalsBecomeTheirDifferencesAndSleepItsStages() throws {
        let readings = try FITMapper(zone: .named(utc)).map(FITExamples.monitoring(start: start, readings: 8), name: "m.fit")
        func sum(_ type: String) -> Double {
            readings.samples.filter { $0.type == type }.reduce(0) { if case let .real(v) = $1.value { $0 + v } else { $0 } }
        }
        let steps = readings.samples.filter { $0.type == "HKQuantityTypeIdentifierStepCount" }
        XCTAssertEqual(steps.count, 8)
        XCTAssertEqual(sum("HKQuantityTypeIdentifierStepCount"), 960, "the day's total, not the sum of running totals")
        XCTAssertEqual(steps[1].value, .real(120))
        XCTAssertEqual(steps[1].attribute("startDate"), "2026-03-01 09:15:00 +0100")
        XCTAssertEqual(steps[1].attribute("endDate"), "2026-03-01 09:30:00 +0100")
        XCTAssertEqual(sum("HKQuantityTypeIdentifierActiveEnergyBurned"), 40)
        XCTAssertEqual(sum("HKQuantityTypeIdentifierDistanceWalkingRunning"), 720, "cm to m, once")
        let heart = readings.samples.filter { $0.type == "HKQuantityTypeIdentifierHeartRate" }
        XCTAssertEqual(heart.count, 8)
        XCTAssertEqual(heart[0].attribute("startDate"), "2026-03-01 09:16:00 +0100", "a 16-bit timestamp against the full one before it")
        let sleep = readings.samples.filter { $0.type == "HKCategoryTypeIdentifierSleepAnalysis" }
        XCTAssertEqual(sleep.map(\.value), [.text("HKCategoryValueSleepAnalysisAsleepCore"), .text("HKCategoryValueSleepAnalysisAsleepDeep"),
                                            .text("HKCategoryValueSleepAnalysisAsleepREM")])
        XCTAssertEqual(sleep[0].sourceName, "Garmin fenix 7")
    }

    func testSamplesReadBackAsTheSameRecordAndMapToLOINC() throws {
        let readings = try FITMapper(zone: .named(utc)).map(FITExamples.activity(start: start, heartRates: [72]), name: "x.fit")
        let sample = readings.samples[0]
        XCTAssertEqual(SampleRecord(attributes: sample.attributes)?.attributes.description, sample.attributes.description)
        XCTAssertEqual(AppleHealthMapper.seriesMapping(sample.type).codes["LOINC"], ["8867-4"])
    }
}

extension FITDecoderTests {
    /// A run with positions: its session carries the route's summary and the power it states.
    func testARunsPositionsBecomeItsSessionsRouteSummary() throws {
        // 0.009° of latitude is about 1 km: north 1 km, then 1 km more; altitudes with a metre of jitter.
        let route: [(latitude: Double, longitude: Double, altitude: Double)] = [
            (52.5200, 13.4050, 34), (52.5245, 13.4050, 35), (52.5290, 13.4050, 40), (52.5335, 13.4050, 39), (52.5380, 13.4050, 31),
        ]
        let bytes = FITExamples.activity(start: start, heartRates: [120, 130], route: route, power: (average: 231, maximum: 402))
        let readings = try FITMapper(zone: .named(utc)).map(bytes, name: "run.fit")
        let session = try XCTUnwrap(readings.entries.first).content
        XCTAssertEqual(session.valueText, "5 km, 320 kcal, average heart rate 125/min, average power 231 W, 1 lap, route 2 km, climbing 6 m")
        let raw = try JSONParser.parse(try XCTUnwrap(session.raw))
        let summary = try XCTUnwrap(raw["route"])
        XCTAssertEqual(summary["points"], 5)
        XCTAssertEqual(summary["start"], .array([.decimal(52.52, places: 5), .decimal(13.405, places: 5)]))
        XCTAssertEqual(summary["end"], .array([.decimal(52.538, places: 5), .decimal(13.405, places: 5)]))
        // Great-circle 0.018° of latitude: 2,001.5 m; the semicircles' rounding moves it by centimetres.
        XCTAssertEqual(summary["distance_m"]?.number ?? 0, 2001.5, accuracy: 0.2)
        XCTAssertEqual(summary["ascent_m"], .decimal(6, places: 1), "34 → 40; the 1 m steps are jitter")
        XCTAssertEqual(summary["descent_m"], .decimal(9, places: 1), "40 → 31")
        XCTAssertEqual(summary["altitude_min_m"], .decimal(31, places: 1))
        XCTAssertEqual(raw["avg_power_w"], .double(231))
        XCTAssertEqual(raw["max_power_w"], .double(402))
        // No heart-rate sample was made of the position-only records.
        XCTAssertEqual(readings.samples.filter { $0.type == "HKQuantityTypeIdentifierHeartRate" }.count, 2)
    }

    /// Positions outside any session, and a file of many sessions over one set of positions.
    func testPositionsCountInOneSessionAtMost() throws {
        var route = RouteSummary()
        route.add(latitude: 91, longitude: 0, altitude: nil)
        route.add(latitude: .nan, longitude: 0, altitude: nil)
        XCTAssertTrue(route.isEmpty)
        XCTAssertEqual(route.implausible, 2)
        route.add(latitude: -33.8688, longitude: 151.2093, altitude: 12_000)
        XCTAssertEqual(route.points, 1)
        XCTAssertNil(route.lowest, "an altitude above Everest is none")
        XCTAssertEqual(route.text, "route 0 km")
        XCTAssertEqual(route.json["positions_left_out"], 2)

        // A record-less activity's session has no route member at all.
        let plain = try FITMapper(zone: .named(utc)).map(FITExamples.activity(start: start, heartRates: [120]), name: "run.fit")
        let raw = try JSONParser.parse(try XCTUnwrap(plain.entries.first?.content.raw))
        XCTAssertNil(raw["route"])
    }
}
