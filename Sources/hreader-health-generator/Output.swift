import Foundation
import HReaderJSON
import ZIPFoundation

struct GeneratorError: Error, CustomStringConvertible {
    let description: String
}

/// Writes the export as a bare XML file (with its side folders) or as the Health app's zip.
struct ExportWriter {
    let synth: Synth
    let exportName: String
    static let chunkSize = 256 * 1024

    private var exportDate: Date { Date(timeIntervalSince1970: TimeInterval(synth.clock.exportEpoch)) }

    // MARK: .xml

    func writeXML(to url: URL) throws {
        let manager = FileManager.default
        guard manager.createFile(atPath: url.path, contents: nil) else {
            throw GeneratorError(description: "cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        var stream = ExportXMLStream(synth: synth)
        var buffer = ByteSink(capacity: ExportWriter.chunkSize + 64 * 1024)
        do {
            while !stream.isFinished {
                buffer.removeAll()
                stream.fill(&buffer, target: ExportWriter.chunkSize)
                try handle.write(contentsOf: Data(buffer.bytes))
            }
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }

        // The side files, where the unpacked export keeps them.
        let folder = url.deletingLastPathComponent()
        try forEachSideFile { relativePath, data in
            let target = folder.appendingPathComponent(relativePath)
            try manager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: target)
        }
    }

    // MARK: .zip

    func writeZIP(to url: URL) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: url.path) { try manager.removeItem(at: url) }
        do {
            let archive = try Archive(url: url, accessMode: .create)
            try addExportXML(to: archive)
            try add(data: cdaDocument(), path: "apple_health_export/export_cda.xml", to: archive)
            try forEachSideFile { relativePath, data in
                try add(data: data, path: "apple_health_export/" + relativePath, to: archive)
            }
        } catch {
            try? manager.removeItem(at: url)
            throw error
        }
    }

    /// ZIPFoundation wants the entry's size before its bytes: one pass only counts them, the
    /// second feeds them to the deflater as it asks. Generation is deterministic, so both agree.
    private func addExportXML(to archive: Archive) throws {
        var counter = ExportXMLStream(synth: synth)
        var scratch = ByteSink(capacity: ExportWriter.chunkSize + 64 * 1024)
        while !counter.isFinished {
            scratch.removeAll()
            counter.fill(&scratch, target: ExportWriter.chunkSize)
        }
        let size = counter.bytesProduced
        scratch.removeAll()

        var stream = ExportXMLStream(synth: synth)
        var pending = scratch
        var readOffset = 0
        var delivered: Int64 = 0
        try archive.addEntry(
            with: "apple_health_export/" + exportName, type: .file, uncompressedSize: size,
            modificationDate: exportDate, compressionMethod: .deflate, bufferSize: ExportWriter.chunkSize
        ) { position, length in
            guard position == delivered else {
                throw GeneratorError(description: "zip writer asked for bytes out of order")
            }
            if pending.count - readOffset < length {
                pending.bytes.removeSubrange(0..<readOffset)
                readOffset = 0
                stream.fill(&pending, target: length)
            }
            guard pending.count - readOffset >= length else {
                throw GeneratorError(description: "export.xml came out shorter on the second pass")
            }
            let chunk = Data(pending.bytes[readOffset..<(readOffset + length)])
            readOffset += length
            delivered += Int64(length)
            return chunk
        }
        guard stream.isFinished, readOffset == pending.count else {
            throw GeneratorError(description: "export.xml came out longer on the second pass")
        }
    }

    private func add(data: Data, path: String, to archive: Archive) throws {
        try archive.addEntry(
            with: path, type: .file, uncompressedSize: Int64(data.count),
            modificationDate: exportDate, compressionMethod: .deflate
        ) { position, length in
            data.subdata(in: Int(position)..<(Int(position) + length))
        }
    }

    // MARK: Side files

    /// Workout routes (GPX) and clinical records (FHIR R4 JSON), by path relative to the export folder.
    private func forEachSideFile(_ body: (String, Data) throws -> Void) throws {
        for index in 0..<synth.plan.workouts {
            let workout = synth.workout(index)
            guard workout.hasRoute else { continue }
            try body("workout-routes/" + synth.routeFileName(workout), synth.gpx(workout))
        }
        for index in 0..<synth.plan.clinical {
            let sample = synth.clinical(index)
            try body(String(sample.resourceFilePath.dropFirst()), synth.clinicalJSON(sample))
        }
    }

    /// A small stand-in for the CDA document real exports carry beside export.xml.
    private func cdaDocument() -> Data {
        let me = Me(seed: synth.seed)
        let gender = me.sex == "HKBiologicalSexFemale" ? "F" : "M"
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
             <realmCode code="US"/>
             <typeId root="2.16.840.1.113883.1.3" extension="POCD_HD000040"/>
             <templateId root="2.16.840.1.113883.10.20.22.1.2"/>
             <id extension="Health Export CDA" root="1.1.1.1.1.1.1.1.1"/>
             <code code="34109-9" codeSystem="2.16.840.1.113883.6.1" codeSystemName="LOINC" displayName="Note"/>
             <title>Health Data Export (synthetic)</title>
             <effectiveTime value="\(synth.clock.cdaTimestamp(synth.clock.exportEpoch))"/>
             <confidentialityCode code="N" codeSystem="2.16.840.1.113883.5.25"/>
             <recordTarget>
              <patientRole>
               <id extension="generator-patient" root="1.1.1.1.1.1.1.1.2"/>
               <patient>
                <name><given>Zoë</given><family>Generator</family></name>
                <administrativeGenderCode code="\(gender)" codeSystem="2.16.840.1.113883.5.1"/>
                <birthTime value="\(me.birthDate.replacingOccurrences(of: "-", with: ""))"/>
               </patient>
              </patientRole>
             </recordTarget>
             <author>
              <time value="\(synth.clock.cdaTimestamp(synth.clock.exportEpoch))"/>
              <assignedAuthor>
               <id nullFlavor="NA"/>
               <assignedPerson><name>hreader-health-generator</name></assignedPerson>
              </assignedAuthor>
             </author>
             <custodian>
              <assignedCustodian>
               <representedCustodianOrganization>
                <id nullFlavor="NA"/>
                <name>Generator</name>
               </representedCustodianOrganization>
              </assignedCustodian>
             </custodian>
             <component>
              <structuredBody>
               <component>
                <section>
                 <title>Vital Signs</title>
                 <text>Synthetic placeholder; the data is in export.xml.</text>
                </section>
               </component>
              </structuredBody>
             </component>
            </ClinicalDocument>

            """
        return Data(text.utf8)
    }

    // MARK: --counts

    func countsJSON() -> Data {
        let plan = synth.plan
        let me = Me(seed: synth.seed)
        var byType: JSONObject = []
        for (index, type) in Catalog.types.enumerated() where plan.counts[index] > 0 {
            byType.append((type.identifier, .int(plan.counts[index])))
        }
        byType.members.sort { $0.key < $1.key }
        var correlations: JSONObject = []
        if plan.bloodPressureReadings > 0 {
            correlations.append((Catalog.correlationBloodPressure, .int(plan.bloodPressureReadings)))
        }
        let document = JSONValue.object([
            ("records_by_type", .object(byType)),
            ("correlations_by_type", .object(correlations)),
            ("workouts", .int(plan.workouts)),
            ("activity_summaries", .int(plan.days)),
            ("clinical_records", .int(plan.clinical)),
            ("me", .object([("birth_date", .string(me.birthDate)), ("sex", .string(me.sex))])),
        ])
        return Data((document.serialized(pretty: true) + "\n").utf8)
    }
}
