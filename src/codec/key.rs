//! The order-preserving engine key: table id + PartitionKey + 0x00 + RowKey.
