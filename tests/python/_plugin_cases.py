"""The epoch cases every framework plugin's iterator is tested with (test_plugin_pytorch.py,
_paddle.py, _mxnet.py): the exact batches of three epochs for data 1..7 and batch size 2, per
last batch policy and padding, as DALI's iterators give them."""
from stoker.plugin.base_iterator import LastBatchPolicy

FILL, DROP, PARTIAL = LastBatchPolicy.FILL, LastBatchPolicy.DROP, LastBatchPolicy.PARTIAL

EPOCHS = {
    (PARTIAL, True): [[[1, 2], [3, 4], [5, 6], [7]]] * 3,
    (PARTIAL, False): [[[1, 2], [3, 4], [5, 6], [7]],
                       [[2, 3], [4, 5], [6, 7], [1]],
                       [[3, 4], [5, 6], [7, 1], [2]]],
    (FILL, True): [[[1, 2], [3, 4], [5, 6], [7, 7]]] * 3,
    (FILL, False): [[[1, 2], [3, 4], [5, 6], [7, 1]],
                    [[2, 3], [4, 5], [6, 7]],
                    [[1, 2], [3, 4], [5, 6], [7, 1]]],
    (DROP, True): [[[1, 2], [3, 4], [5, 6]]] * 3,
    (DROP, False): [[[1, 2], [3, 4], [5, 6]],
                    [[2, 3], [4, 5], [6, 7]],
                    [[3, 4], [5, 6], [7, 1]]],
}
