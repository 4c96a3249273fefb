print("hreader")
