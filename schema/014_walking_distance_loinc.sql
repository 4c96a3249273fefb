-- hreader vault schema, migration 14: walking and running distance under a LOINC code that exists.
--
-- The Apple Health mapping (and the wearables' readers, which use it) coded walking and running
-- distance as 41953-8, which is no LOINC code: the check digit of 41953 is 1, and 41953-1 is a
-- 24-hour total. A reading over any stretch of time is 55430-3, "Walking distance unspecified time
-- Pedometer" (as 55423-8 is for steps). The series and entries the mapping coded are recoded, so
-- that search, the timeline and the export (FHIR Observations) say the same code as a new import.
UPDATE sample_series SET codes = replace(codes, '"41953-8"', '"55430-3"')
 WHERE codes LIKE '%"41953-8"%' AND codes LIKE '%"HKQuantityTypeIdentifierDistanceWalkingRunning"%';
UPDATE entries SET codes = replace(codes, '"41953-8"', '"55430-3"')
 WHERE codes LIKE '%"41953-8"%' AND codes LIKE '%"HKQuantityTypeIdentifierDistanceWalkingRunning"%';
