// LongLink
