# Files of src/ops/detection: the operators on bounding boxes and the SSD pipeline's crops.
# Boxes and coordinates: bb_flip, coord_flip, bbox_paste, box_encoder.
list(APPEND STOKER_SOURCES
  src/ops/detection/boxes.cc
  src/ops/detection/box_encoder.cc
)
# Random crops that keep boxes: random_bbox_crop.
list(APPEND STOKER_SOURCES
  src/ops/detection/random_bbox_crop.cc
)
# Affine transforms: transforms.*, coord_transform.
list(APPEND STOKER_SOURCES
  src/ops/detection/transforms.cc
  src/ops/detection/coord_transform.cc
)
# Segmentation: segmentation.random_mask_pixel, random_object_bbox, select_masks.
list(APPEND STOKER_SOURCES
  src/ops/detection/segmentation.cc
)
# The other random crops: ssd_random_crop, roi_random_crop, random_crop_generator; bbox_rotate.
list(APPEND STOKER_SOURCES
  src/ops/detection/random_crops.cc
  src/ops/detection/bbox_rotate.cc
)
