/// The applets list built into the binary, in hReader's `HReaderApplets.plist` format and with hReader's
/// identifiers, so per-patient lists written for hReader name the same applets. hReader's image and HTML
/// placeholders are left out (they have nothing to show on a terminal); the activity applet is hreader's own.
enum DefaultApplets {
    static let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <array>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.medications</string>
                <key>class_name</key><string>HRMedicationsAppletTile</string>
                <key>display_name</key><string>Medications</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.bloodpressure</string>
                <key>class_name</key><string>HRBloodPressureAppletTile</string>
                <key>display_name</key><string>Blood Pressure</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.bmi</string>
                <key>class_name</key><string>HRBMIVitalAppletTile</string>
                <key>display_name</key><string>BMI</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.vital-sign.oxygen-saturation</string>
                <key>class_name</key><string>HROxygenSaturationAppletTile</string>
                <key>display_name</key><string>Oxygen Saturation</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.vital-sign.respiratory-rate</string>
                <key>class_name</key><string>HRRespiratoryRateAppletTile</string>
                <key>display_name</key><string>Respiratory Rate</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.vital-sign.total-cholesterol</string>
                <key>class_name</key><string>HRTotalCholesterolAppletTile</string>
                <key>display_name</key><string>Total Cholesterol</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.encounters</string>
                <key>class_name</key><string>HREncountersAppletTile</string>
                <key>display_name</key><string>Encounters</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.immunizations</string>
                <key>class_name</key><string>HRImmunizationsAppletTile</string>
                <key>display_name</key><string>Immunizations</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.functionalstatus</string>
                <key>class_name</key><string>HRFunctionalStatusAppletTile</string>
                <key>display_name</key><string>Functional Status</string>
            </dict>
            <dict>
                <key>identifier</key><string>org.mitre.hreader.tbi</string>
                <key>class_name</key><string>TBITrackerAppletTile</string>
                <key>display_name</key><string>TBI Tracker</string>
                <key>days</key><integer>30</integer>
            </dict>
            <dict>
                <key>identifier</key><string>org.hreader.activity</string>
                <key>class_name</key><string>HRActivityAppletTile</string>
                <key>display_name</key><string>Activity</string>
            </dict>
        </array>
        </plist>
        """
}
