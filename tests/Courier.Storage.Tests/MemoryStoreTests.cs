using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>The store contract against the MemoryStore.</summary>
public sealed class MemoryStoreTests : StreamStoreTests
{
    protected override StorageType Kind => StorageType.Memory;

    protected override IStreamStore CreateStore(StoreConfig config) => StreamStores.CreateMemory(config);

    [Fact]
    public void Memory_store_reports_its_type_and_ignores_flush_and_sync()
    {
        var store = Create();
        Assert.Equal(StorageType.Memory, store.Type);
        PutOk(store, "foo");
        store.Flush();
        store.Sync();
        Assert.Equal(1UL, store.State().Msgs);
        Assert.Empty(store.Warnings);
    }
}
