config = llama3_8b()
config.parallelism = ParallelismConfig(data_parallel_shard_degree=8, tensor_parallel_degree=(2
config.activation_checkpoint = None
